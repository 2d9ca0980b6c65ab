/**
 * RBAC enforcement on the admin API (kong-reference Part B §2–§3). Runs after the workspace prefix is resolved:
 * 1. authenticate the `Kong-Admin-Token` header → 401 `Invalid RBAC credentials`;
 * 2. endpoint check (`on`, `both`) → 403 `<name>, you do not have permissions to <action> this resource`;
 * 3. entity check (`entity`, `both`): the caller travels into the EntityService as an authorizer
 *    (rbac/entity-authorizer.ts): each read and write authorizes the row it holds, and listings page through the
 *    rows the caller may read only.
 * The routes then apply the self-modification guard with the caller this middleware records, and a create grants
 * the creator's default role its entity in the create's own transaction (RbacService.recordCreation).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Errors } from '@gatehouse/core';
import { actionFromMethod, decideEndpoint, decisionPath } from './decide';
import { setAccess } from '../http/context';
import { setPrivateAccess } from '../http/private-material';
import { entityAuthorizer, forbidden } from './entity-authorizer';
import { privateAccessOf } from './private-access';
import { scopeOf, setCaller } from './request-scope';
import type { Caller, RbacService } from './service';
import { TokenCache } from './token-cache';
import { tokenCacheKey } from './token';

export type EnforceMode = 'off' | 'on' | 'entity' | 'both';
const MODES: readonly EnforceMode[] = ['off', 'on', 'entity', 'both'];

/** `GATEHOUSE_ENFORCE_RBAC`: unset or empty = off; anything but off|on|entity|both is a configuration error. */
export function parseEnforceMode(value: string | undefined): EnforceMode {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '') return 'off';
  if ((MODES as readonly string[]).includes(v)) return v as EnforceMode;
  throw new Error(`GATEHOUSE_ENFORCE_RBAC must be one of ${MODES.join(', ')} (got '${value}')`);
}

export const ADMIN_TOKEN_HEADER = 'kong-admin-token';

export interface EnforcementOptions {
  mode: EnforceMode;
  service: RbacService;
  /** successful token checks (each use is checked against the user's current digest) */
  cache?: TokenCache;
  /** header carrying the token; default Kong-Admin-Token */
  header?: string;
}

const invalidCredentials = () => Errors.invalidCredentials();

export function rbacEnforcement(options: EnforcementOptions): RequestHandler {
  const { mode, service } = options;
  const cache = options.cache ?? new TokenCache();
  const header = (options.header ?? ADMIN_TOKEN_HEADER).toLowerCase();
  const endpointChecks = mode === 'on' || mode === 'both';
  const entityChecks = mode === 'entity' || mode === 'both';

  return async (req: Request, res: Response, next: NextFunction) => {
    if (mode === 'off') return next();
    try {
      const action = actionFromMethod(req.method);
      if (!action) throw Errors.methodNotAllowed();
      const caller = await authenticate(req, service, cache, header);
      setCaller(res, caller);
      const scope = scopeOf(res);
      setPrivateAccess(res, privateAccessOf(req, caller, scope, { endpoint: endpointChecks, entity: entityChecks }));

      // GET /workspaces is always readable; its result is filtered to the caller's workspaces (Kong 2024)
      const openRead = action === 'read' && /^\/workspaces\/?$/.test(req.path);
      if (endpointChecks && !openRead) {
        const decision = decideEndpoint(caller.endpointRules, { workspace: scope.workspace.name, path: decisionPath(req.path), action });
        if (!decision.allowed) throw forbidden(caller, action);
      }
      if (entityChecks) {
        const defaultWorkspaceId = (await service.defaultWorkspace()).id;
        setAccess(res, entityAuthorizer(caller, { workspaceId: scope.workspace.id, defaultWorkspaceId }));
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The caller behind the token header, or 401. A header sent twice counts as invalid. */
async function authenticate(req: Request, service: RbacService, cache: TokenCache, header: string): Promise<Caller> {
  const values = req.headersDistinct[header];
  if (!values || values.length !== 1 || values[0]!.trim() === '') throw invalidCredentials();
  const token = values[0]!;
  const key = tokenCacheKey(token);
  const user = await service.authenticate(token, cache.get(key));
  if (!user) throw invalidCredentials();
  cache.set(key, { userId: user.id, storedHash: user.user_token });
  return service.callerOf(user);
}
