import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntityDefinition } from '@gatehouse/core';
import { decideEndpoint, decisionPath } from '../rbac/decide';
import { callerOf, workspaceOf } from '../rbac/request-scope';

/**
 * Decision 18 for entities with `privateFields` (certificates: `key`, `key_alt`): a read answers them only to
 * callers that may create or update the entity at that endpoint; everyone else (the built-in `read-only` role, for
 * instance) gets the entity without them. With RBAC off there is no caller and nothing is removed.
 *
 * `paths` says which GET paths return the entity (a collection, one entity, a foreign-key read such as
 * `/snis/{s}/certificate`). Written against the definition's list so that keys (JWK members, `pem.private_key`)
 * can share it.
 */
export function redactPrivateFields(def: EntityDefinition, paths: RegExp): RequestHandler {
  const fields = def.privateFields ?? [];
  const strip = (entity: unknown) => {
    if (entity === null || typeof entity !== 'object') return entity;
    const copy = { ...(entity as Record<string, unknown>) };
    for (const field of fields) delete copy[field];
    return copy;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (fields.length === 0 || req.method !== 'GET' || !paths.test(req.path)) return next();
    const caller = callerOf(res);
    if (!caller) return next();
    const workspace = workspaceOf(res)?.name ?? 'default';
    const path = decisionPath(req.path);
    const mayWrite = (['update', 'create'] as const).some((action) => decideEndpoint(caller.endpointRules, { workspace, path, action }).allowed);
    if (mayWrite) return next();
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode !== 200 || body === null || typeof body !== 'object') return send(body);
      const data = (body as { data?: unknown }).data;
      return send(Array.isArray(data) ? { ...(body as object), data: data.map(strip) } : strip(body));
    };
    next();
  };
}
