/**
 * RBAC for the admin API, wired for createAdminApp:
 *
 *   const database = await openDatabase({ url, migrations: { ...rbacMigrations() } });
 *   const rbac = createRbac({ db: database.db, ...rbacConfigFromEnv(process.env) });
 *   await rbac.bootstrap();
 *   createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension] });
 *
 * Token handling, documented: `user_token` is stored as a bcrypt digest (cost 9) and only that digest is ever
 * returned. `PATCH /rbac/users/{u}` without `user_token` generates a new token; that one response carries the new
 * plain token in the extra field `generated_user_token`, and it cannot be read back afterwards.
 */
import type { RequestHandler } from 'express';
import type { Db } from '../db/tables';
import type { AdminContext } from '../http/context';
import { rbacEnforcement, parseEnforceMode, type EnforceMode } from './enforce';
import { mountRbacRoutes } from './routes';
import { RbacService } from './service';
import { TokenCache } from './token-cache';
import { workspacePrefix } from './workspace-prefix';

export * from './decide';
export * from './entities';
export { rbacMigrations } from './migrations';
export { RbacService, BOOTSTRAP_USER, type Caller, type RbacScope, type RbacFamilies } from './service';
export { workspaceKind, userKind, roleKind, adminKind } from './kinds';
export { RolePermissions } from './role-permissions';
export { rbacEnforcement, parseEnforceMode, ADMIN_TOKEN_HEADER, type EnforceMode, type EnforcementOptions } from './enforce';
export { workspacePrefix } from './workspace-prefix';
export { mountRbacRoutes } from './routes';
export { scopeOf, workspaceOf, callerOf } from './request-scope';
export { TokenCache } from './token-cache';
export { tokenIdent, hashToken, verifyToken, generateToken } from './token';

export interface RbacOptions {
  /** the migrated database (rbacMigrations() included) */
  db: Db;
  /** GATEHOUSE_ENFORCE_RBAC; default off */
  mode?: EnforceMode;
  /** GATEHOUSE_ADMIN_TOKEN: bootstrap() creates the super-admin user `gatehouse-admin` with it, once */
  adminToken?: string;
  /** how long a successful token check is remembered; default 30 s */
  tokenCacheTtlMs?: number;
  log?: (message: string, err?: unknown) => void;
}

export interface Rbac {
  service: RbacService;
  mode: EnforceMode;
  /** for AdminAppDeps.middleware: the workspace prefix, then enforcement */
  middleware: RequestHandler[];
  /** for AdminAppDeps.extensions: the /rbac, /workspaces and /admins routes */
  extension: (ctx: AdminContext) => void;
  /** creates the bootstrap super-admin from adminToken when it does not exist; true when created */
  bootstrap(): Promise<boolean>;
  /** forgets cached token checks */
  clearTokenCache(): void;
}

/** Reads GATEHOUSE_ENFORCE_RBAC and GATEHOUSE_ADMIN_TOKEN. An invalid mode throws (a configuration error). */
export function rbacConfigFromEnv(env: Record<string, string | undefined>): { mode: EnforceMode; adminToken?: string } {
  const adminToken = env.GATEHOUSE_ADMIN_TOKEN?.trim() || undefined;
  return { mode: parseEnforceMode(env.GATEHOUSE_ENFORCE_RBAC), adminToken };
}

export function createRbac(options: RbacOptions): Rbac {
  const mode = options.mode ?? 'off';
  const cache = new TokenCache(options.tokenCacheTtlMs ?? 30_000);
  let ctx: AdminContext | null = null;
  // Cached token checks need no clearing on RBAC writes: each use is checked against the user's current stored
  // digest and enabled flag, so a changed token, a disabled or a deleted user is refused at once, on every replica.
  const service = new RbacService(options.db, { entityTypes: () => ctx?.store.entityNames() ?? [] });
  return {
    service,
    mode,
    middleware: [workspacePrefix(service), rbacEnforcement({ mode, service, cache })],
    extension: (adminCtx) => {
      ctx = adminCtx;
      mountRbacRoutes(adminCtx, service);
    },
    bootstrap: async () => (options.adminToken ? service.bootstrapSuperAdmin(options.adminToken) : false),
    clearTokenCache: () => cache.clear(),
  };
}
