/**
 * The RBAC and workspace operations of the admin API (interface.md "RBAC operations", kong-reference Part B §1, §4):
 * validation, token hashing, default roles, the self-modification guard. Each write is one transaction.
 * HTTP concerns (paths, statuses, paging links) live in rbac/routes.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DbError, ErrorCode, Errors, HttpError, schemaViolation } from '@gatehouse/core';
import {
  ALL_ACTIONS,
  DEFAULT_WORKSPACE,
  WILDCARD,
  buildPermissionMap,
  mergeEndpointPermissions,
  mergeEntityPermissions,
  normalizeEndpoint,
  parseActions,
  type EndpointRuleMap,
  type EntityRuleMap,
  type PermissionMap,
} from './decide';
import {
  RBAC_ENTITY_TABLES,
  WILDCARD_ENTITY_TYPE,
  adminInput,
  adminPatch,
  parseBody,
  rbacRoleInput,
  rbacRolePatch,
  rbacUserInput,
  rbacUserPatch,
  roleEndpointInput,
  roleEndpointPatch,
  roleEntityInput,
  roleEntityPatch,
  workspaceInput,
  type AdminView,
  type RbacRoleView,
  type RbacUserView,
  type RoleEndpointView,
  type RoleEntityView,
  type WorkspaceView,
} from './entities';
import { mapRbacSqlError } from './sql-errors';
import * as store from './store';
import type { EndpointRow, EntityRow, Executor, KeyPage, RoleRow, UserRow, WorkspaceRow } from './store';
import { generateToken, hashToken, normalizeToken, tokenIdent, verifyToken } from './token';

/** The authenticated caller of a request, when enforcement is on. */
export interface Caller {
  user: UserRow;
  /** every role of the user (its default role included) */
  roles: RoleRow[];
  endpointRules: EndpointRuleMap;
  entityRules: EntityRuleMap;
}

/** Where a request runs: its workspace and, with enforcement on, its caller. */
export interface RbacScope {
  workspace: WorkspaceRow;
  caller: Caller | null;
}

export interface RbacServiceOptions {
  /**
   * entity types (DAO table names) stored by the rest of the control plane, for `entity_id` existence checks;
   * read on every call so entities registered later count
   */
  entityTypes?: () => Iterable<string>;
  /** called after every committed RBAC write */
  onWrite?: () => void;
}

/** A user as returned, plus the plain token when the server just generated one (PATCH without user_token). */
export type UserResult = RbacUserView & { generated_user_token?: string };

/**
 * Top-level admin paths. A workspace may not be named like one: the first segment of `/{ws}/services` must be
 * told apart from `/services/{id}`.
 */
export const RESERVED_WORKSPACE_NAMES = new Set([
  'acls', 'admins', 'apis', 'auth', 'basic-auths', 'ca_certificates', 'cache', 'certificates', 'clustering', 'config',
  'consumer_groups', 'consumers', 'debug', 'endpoints', 'groups', 'hmac-auths', 'jwts', 'key-auths', 'key-sets', 'keys',
  'license', 'metrics', 'oauth2', 'oauth2_tokens', 'openapi.json', 'plugins', 'rbac', 'routes', 'schemas', 'services',
  'snis', 'status', 'tags', 'targets', 'timers', 'upstreams', 'userinfo', 'vaults', 'workspaces',
]);

const notFound = () => Errors.notFound();

export class RbacService {
  constructor(
    readonly db: Kysely<any>,
    private readonly options: RbacServiceOptions = {},
  ) {}

  /** One transaction; SQL constraint errors become Kong errors; onWrite after commit. */
  private async write<T>(written: Record<string, unknown>, work: (trx: Executor) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await this.db.transaction().execute(work);
    } catch (err) {
      throw mapRbacSqlError(err, written);
    }
    this.options.onWrite?.();
    return result;
  }

  /** the tables of entities stored by the rest of the control plane */
  private configTables(): string[] {
    return [...(this.options.entityTypes?.() ?? [])];
  }

  private entityTables(): Map<string, string> {
    const tables = new Map(Object.entries(RBAC_ENTITY_TABLES));
    for (const name of this.options.entityTypes?.() ?? []) tables.set(name, name);
    return tables;
  }

  // -------------------------------------------------------------------------------------------------------------
  // workspaces

  async defaultWorkspace(ex: Executor = this.db): Promise<WorkspaceRow> {
    const ws = await store.findWorkspace(ex, DEFAULT_WORKSPACE);
    if (!ws) throw new Error('the default workspace is missing: database not migrated');
    return ws;
  }

  findWorkspace(nameOrId: string, ex: Executor = this.db): Promise<WorkspaceRow | null> {
    return store.findWorkspace(ex, nameOrId);
  }

  async getWorkspace(nameOrId: string): Promise<WorkspaceView> {
    const ws = await store.findWorkspace(this.db, nameOrId);
    if (!ws) throw notFound();
    return ws;
  }

  /** Workspaces the caller may see: all of them without a caller or with any rule on workspace `*` (Kong 2024). */
  async listWorkspaces(scope: RbacScope, size: number, after?: string): Promise<KeyPage<WorkspaceView>> {
    const page = await store.pageWorkspaces(this.db, size, after);
    const rules = scope.caller?.endpointRules;
    if (!rules || rules.has(WILDCARD)) return page;
    return { items: page.items.filter((w) => rules.has(w.name) || rules.has(w.id)), next: page.next };
  }

  async createWorkspace(body: unknown): Promise<WorkspaceView> {
    const input = parseBody(workspaceInput, body);
    checkWorkspaceName(input.name);
    const now = store.nowSeconds();
    const ws: WorkspaceRow = {
      id: input.id ?? randomUUID(),
      name: input.name,
      comment: input.comment ?? null,
      config: input.config ?? {},
      meta: input.meta ?? {},
      created_at: now,
      updated_at: now,
    };
    await this.write(ws as never, (trx) => store.insertWorkspace(trx, ws));
    return ws;
  }

  async patchWorkspace(nameOrId: string, body: unknown): Promise<WorkspaceView> {
    const patch = parseBody(workspaceInput.partial().omit({ id: true }), body);
    return this.write(patch, async (trx) => {
      const ws = await store.findWorkspace(trx, nameOrId);
      if (!ws) throw notFound();
      if (patch.name !== undefined && patch.name !== ws.name) {
        if (ws.name === DEFAULT_WORKSPACE) throw new HttpError(400, 'Cannot rename default workspace');
        checkWorkspaceName(patch.name);
        await store.renameWorkspaceInPermissions(trx, ws.name, patch.name);
      }
      const next: WorkspaceRow = {
        ...ws,
        ...definedOnly(patch),
        config: patch.config ? { ...ws.config, ...patch.config } : ws.config,
        meta: patch.meta ? { ...ws.meta, ...patch.meta } : ws.meta,
        updated_at: store.nowSeconds(),
      };
      await store.updateWorkspace(trx, next);
      return next;
    });
  }

  /** PUT /workspaces/{name_or_id}: replace (200) or create (201). */
  async putWorkspace(nameOrId: string, body: unknown): Promise<{ created: boolean; workspace: WorkspaceView }> {
    const raw = { ...(asRecord(body) ?? {}) };
    if (store.isUuid(nameOrId)) raw.id = nameOrId;
    else raw.name = nameOrId;
    const input = parseBody(workspaceInput, raw);
    checkWorkspaceName(input.name);
    return this.write(input, async (trx) => {
      const existing = await store.findWorkspace(trx, nameOrId);
      const now = store.nowSeconds();
      if (!existing) {
        const ws: WorkspaceRow = { id: input.id ?? randomUUID(), name: input.name, comment: input.comment ?? null, config: input.config ?? {}, meta: input.meta ?? {}, created_at: now, updated_at: now };
        await store.insertWorkspace(trx, ws);
        return { created: true, workspace: ws };
      }
      if (existing.name === DEFAULT_WORKSPACE && input.name !== DEFAULT_WORKSPACE) throw new HttpError(400, 'Cannot rename default workspace');
      if (input.name !== existing.name) await store.renameWorkspaceInPermissions(trx, existing.name, input.name);
      const ws: WorkspaceRow = { ...existing, name: input.name, comment: input.comment ?? null, config: input.config ?? {}, meta: input.meta ?? {}, updated_at: now };
      await store.updateWorkspace(trx, ws);
      return { created: false, workspace: ws };
    });
  }

  /** 204 also when absent (Kong); the default workspace and non-empty workspaces are refused. */
  async deleteWorkspace(nameOrId: string): Promise<void> {
    await this.write({}, async (trx) => {
      const ws = await store.findWorkspace(trx, nameOrId);
      if (!ws) return;
      if (ws.name === DEFAULT_WORKSPACE) throw new HttpError(400, 'Cannot delete default workspace');
      if ((await store.workspaceContentCount(trx, ws.id, this.configTables())) > 0) throw new HttpError(400, 'Workspace is not empty');
      await store.deleteWorkspace(trx, ws.id);
    });
  }

  /** Records the workspace an entity was created in (entities without a record live in `default`). */
  async recordEntityWorkspace(entityId: string, entityType: string, wsId: string, ex: Executor = this.db): Promise<void> {
    await store.recordEntityWorkspace(ex, entityId, entityType, wsId);
  }

  /** entity id → workspace id for the given ids; ids without a record map to the default workspace. */
  async workspacesOf(entityIds: string[], ex: Executor = this.db): Promise<Map<string, string>> {
    const recorded = await store.entityWorkspaces(ex, entityIds);
    const def = (await this.defaultWorkspace(ex)).id;
    return new Map(entityIds.map((id) => [id, recorded.get(id) ?? def]));
  }

  /** Grants an entity to a role (the creator's default role owns what it creates); an existing grant stays. */
  async grantOwnership(roleId: string, entityId: string, entityType: string, actions: number): Promise<void> {
    const now = store.nowSeconds();
    await store.insertEntityPermissionIfAbsent(this.db, {
      role_id: roleId,
      entity_id: entityId,
      entity_type: entityType,
      actions,
      negative: false,
      comment: null,
      created_at: now,
      updated_at: now,
    });
  }

  /** Drops RBAC's records of deleted entities: their workspace record and the entity permissions naming them. */
  async forgetEntities(entityIds: string[], ex: Executor = this.db): Promise<void> {
    await store.forgetEntityWorkspace(ex, entityIds);
    await store.deleteEntityPermissionsFor(ex, entityIds);
  }

  // -------------------------------------------------------------------------------------------------------------
  // users

  /** A user by name or id; admins' users answer 404 Not found here (they are managed through /admins). */
  private async userOr404(ex: Executor, nameOrId: string): Promise<UserRow> {
    const user = await store.findUser(ex, nameOrId);
    if (!user) throw new HttpError(404, `No RBAC user by name or id ${nameOrId}`);
    if (await store.isAdminUser(ex, user.id)) throw notFound();
    return user;
  }

  async getUser(nameOrId: string): Promise<RbacUserView> {
    return this.userOr404(this.db, nameOrId);
  }

  listUsers(size: number, after?: string): Promise<KeyPage<RbacUserView>> {
    return store.pageUsers(this.db, size, after);
  }

  /** Refuses a token another user already has (found through the ident, confirmed with bcrypt). */
  private async assertTokenFree(ex: Executor, token: string, exceptUserId?: string): Promise<void> {
    for (const other of await store.usersByIdent(ex, tokenIdent(token), false)) {
      if (other.id === exceptUserId) continue;
      if (await verifyToken(token, other.user_token)) {
        throw schemaViolation({ user_token: 'a user with this token already exists' });
      }
    }
  }

  private async newUserRow(input: { id?: string; name: string; user_token: string; comment?: string | null; enabled?: boolean }): Promise<UserRow> {
    const now = store.nowSeconds();
    return {
      id: input.id ?? randomUUID(),
      name: input.name,
      user_token: await hashToken(input.user_token),
      user_token_ident: tokenIdent(input.user_token),
      comment: input.comment ?? null,
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    };
  }

  /**
   * Links a new user to its default role, named after it, in the request's workspace. An existing role of that
   * name is reused (so a user named `super-admin` holds the super-admin role), as Kong does.
   */
  private async attachDefaultRole(trx: Executor, user: UserRow, wsId: string): Promise<void> {
    let role = await store.findRole(trx, wsId, user.name);
    if (!role) {
      const now = store.nowSeconds();
      role = { id: randomUUID(), ws_id: wsId, name: user.name, comment: `Default user role generated for ${user.name}`, is_default: true, created_at: now, updated_at: now };
      await store.insertRole(trx, role);
    }
    await store.linkUserRole(trx, user.id, role.id);
  }

  async createUser(scope: RbacScope, body: unknown): Promise<RbacUserView> {
    const input = parseBody(rbacUserInput, body);
    const user = await this.newUserRow(input);
    return this.write(user as never, async (trx) => {
      await this.assertTokenFree(trx, input.user_token);
      await store.insertUser(trx, user);
      await this.attachDefaultRole(trx, user, scope.workspace.id);
      return user;
    });
  }

  /**
   * PATCH /rbac/users/{name_or_id}. Without `user_token` a new token is generated (interface.md, States and
   * transitions); the response then carries it once, in plain text, in `generated_user_token`. `user_token` in
   * the response is always the bcrypt digest.
   */
  async patchUser(nameOrId: string, body: unknown): Promise<UserResult> {
    const patch = parseBody(rbacUserPatch, body);
    const generated = patch.user_token === undefined ? generateToken() : undefined;
    const newToken = patch.user_token ?? generated!;
    // the hash is computed outside the transaction: bcrypt takes tens of milliseconds
    const hashed = await hashToken(newToken);
    return this.write(patch, async (trx) => {
      const user = await this.userOr404(trx, nameOrId);
      const sameToken = generated === undefined && (patch.user_token === user.user_token || (await verifyToken(newToken, user.user_token)));
      if (!sameToken) await this.assertTokenFree(trx, newToken, user.id);
      const next: UserRow = {
        ...user,
        name: patch.name ?? user.name,
        comment: patch.comment !== undefined ? patch.comment : user.comment,
        enabled: patch.enabled ?? user.enabled,
        user_token: sameToken ? user.user_token : hashed,
        user_token_ident: sameToken ? user.user_token_ident : tokenIdent(normalizeToken(newToken)),
        updated_at: store.nowSeconds(),
      };
      await store.updateUser(trx, next);
      return generated === undefined ? next : { ...next, generated_user_token: generated };
    });
  }

  /** 404 for an unknown user (Kong looks the user up first); the user's default role goes once nobody holds it. */
  async deleteUser(scope: RbacScope, nameOrId: string): Promise<void> {
    await this.write({}, async (trx) => {
      const user = await this.userOr404(trx, nameOrId);
      if (scope.caller?.user.id === user.id) throw new HttpError(403, 'the admin should not delete themselves');
      await this.deleteUserAndDefaultRole(trx, user);
    });
  }

  private async deleteUserAndDefaultRole(trx: Executor, user: UserRow): Promise<void> {
    const defaults = (await store.rolesOfUser(trx, user.id)).filter((r) => r.is_default);
    await store.deleteUser(trx, user.id);
    for (const role of defaults) if ((await store.roleHolderCount(trx, role.id)) === 0) await store.deleteRole(trx, role.id);
  }

  /** Finds the enabled user holding this token, or null. Disabled users never match (Kong §2). */
  async authenticate(token: string, cached?: { userId: string; storedHash: string }): Promise<UserRow | null> {
    const candidates = await store.usersByIdent(this.db, tokenIdent(token), true);
    if (cached) {
      const hit = candidates.find((u) => u.id === cached.userId && u.user_token === cached.storedHash);
      if (hit) return hit;
    }
    for (const user of candidates) if (await verifyToken(token, user.user_token)) return user;
    return null;
  }

  /** The caller's roles and merged rules, loaded fresh for each request. */
  async callerOf(user: UserRow): Promise<Caller> {
    const roles = await store.rolesOfUser(this.db, user.id);
    const perms = await store.permissionsOfRoles(this.db, roles.map((r) => r.id));
    return { user, roles, endpointRules: mergeEndpointPermissions(perms.endpoints), entityRules: mergeEntityPermissions(perms.entities) };
  }

  // -------------------------------------------------------------------------------------------------------------
  // user ↔ roles

  async getUserRoles(nameOrId: string): Promise<{ user: RbacUserView; roles: RbacRoleView[] }> {
    const user = await this.userOr404(this.db, nameOrId);
    return { user, roles: visibleRoles(await store.rolesOfUser(this.db, user.id)) };
  }

  async addUserRoles(scope: RbacScope, nameOrId: string, body: unknown): Promise<{ user: RbacUserView; roles: RbacRoleView[] }> {
    const names = roleNames(body);
    return this.write({}, async (trx) => {
      const user = await this.userOr404(trx, nameOrId);
      guardSelf(scope, user.id, 'the admin should not update their own roles');
      const held = new Set((await store.rolesOfUser(trx, user.id)).map((r) => r.id));
      for (const name of names) {
        const role = await store.findRole(trx, scope.workspace.id, name);
        if (!role || role.name !== name) throw new HttpError(400, `role not found with name '${name}'`);
        if (held.has(role.id)) throw new DbError(ErrorCode.PRIMARY_KEY_VIOLATION, `primary key violation on key '{role={id="${role.id}"},user={id="${user.id}"}}'`);
        await store.linkUserRole(trx, user.id, role.id);
        held.add(role.id);
      }
      return { user, roles: visibleRoles(await store.rolesOfUser(trx, user.id)) };
    });
  }

  async deleteUserRoles(scope: RbacScope, nameOrId: string, body: unknown): Promise<void> {
    const names = roleNames(body);
    await this.write({}, async (trx) => {
      const user = await this.userOr404(trx, nameOrId);
      guardSelf(scope, user.id, 'the admin should not update their own roles');
      const ids: string[] = [];
      for (const name of names) {
        const role = await store.findRole(trx, scope.workspace.id, name);
        if (!role || role.name !== name) throw new HttpError(400, `role not found with name '${name}'`);
        ids.push(role.id);
      }
      await store.unlinkUserRoles(trx, user.id, ids);
    });
  }

  async getUserPermissions(nameOrId: string): Promise<PermissionMap> {
    const user = await this.userOr404(this.db, nameOrId);
    const roles = await store.rolesOfUser(this.db, user.id);
    const perms = await store.permissionsOfRoles(this.db, roles.map((r) => r.id));
    return buildPermissionMap(perms.endpoints, perms.entities);
  }

  // -------------------------------------------------------------------------------------------------------------
  // roles

  private async roleOr404(ex: Executor, scope: RbacScope, nameOrId: string): Promise<RoleRow> {
    const role = await store.findRole(ex, scope.workspace.id, nameOrId);
    if (!role) throw notFound();
    return role;
  }

  async getRole(scope: RbacScope, nameOrId: string): Promise<RbacRoleView> {
    return store.roleView(await this.roleOr404(this.db, scope, nameOrId));
  }

  async listRoles(scope: RbacScope, size: number, after?: string): Promise<KeyPage<RbacRoleView>> {
    const page = await store.pageRoles(this.db, scope.workspace.id, size, after);
    return { items: page.items.map(store.roleView), next: page.next };
  }

  async createRole(scope: RbacScope, body: unknown): Promise<RbacRoleView> {
    const input = parseBody(rbacRoleInput, body);
    const now = store.nowSeconds();
    const role: RoleRow = {
      id: input.id ?? randomUUID(),
      ws_id: scope.workspace.id,
      name: input.name,
      comment: input.comment ?? null,
      is_default: input.is_default ?? false,
      created_at: now,
      updated_at: now,
    };
    await this.write(role as never, (trx) => store.insertRole(trx, role));
    return store.roleView(role);
  }

  /**
   * PUT /rbac/roles (key in the body: `id`, else `name`) and PUT /rbac/roles/{name_or_id} (the URL value wins):
   * replaces the role found (200) or creates it from the payload (201). Omitted fields return to their defaults.
   */
  async putRole(scope: RbacScope, nameOrId: string | null, body: unknown): Promise<{ created: boolean; role: RbacRoleView }> {
    const raw = { ...(asRecord(body) ?? {}) };
    if (nameOrId !== null) {
      if (store.isUuid(nameOrId)) raw.id = nameOrId;
      else raw.name = nameOrId;
    }
    const input = parseBody(rbacRoleInput, raw);
    return this.write(input, async (trx) => {
      const key = nameOrId ?? input.id ?? input.name;
      const existing = await store.findRole(trx, scope.workspace.id, key);
      const now = store.nowSeconds();
      if (!existing) {
        const role: RoleRow = { id: input.id ?? randomUUID(), ws_id: scope.workspace.id, name: input.name, comment: input.comment ?? null, is_default: input.is_default ?? false, created_at: now, updated_at: now };
        await store.insertRole(trx, role);
        return { created: true, role: store.roleView(role) };
      }
      if (input.is_default !== undefined && input.is_default !== existing.is_default) throw schemaViolation({ is_default: 'immutable field cannot be updated' });
      const role: RoleRow = { ...existing, name: input.name, comment: input.comment ?? null, updated_at: now };
      await store.updateRole(trx, role);
      return { created: false, role: store.roleView(role) };
    });
  }

  async patchRole(scope: RbacScope, nameOrId: string, body: unknown): Promise<RbacRoleView> {
    const patch = parseBody(rbacRolePatch, body);
    return this.write(patch, async (trx) => {
      const role = await this.roleOr404(trx, scope, nameOrId);
      if (patch.is_default !== undefined && patch.is_default !== role.is_default) throw schemaViolation({ is_default: 'immutable field cannot be updated' });
      const next: RoleRow = { ...role, name: patch.name ?? role.name, comment: patch.comment !== undefined ? patch.comment : role.comment, updated_at: store.nowSeconds() };
      await store.updateRole(trx, next);
      return store.roleView(next);
    });
  }

  /** 204 also when the role does not exist (Kong); a caller may not delete one of its own roles. */
  async deleteRole(scope: RbacScope, nameOrId: string): Promise<void> {
    await this.write({}, async (trx) => {
      const role = await store.findRole(trx, scope.workspace.id, nameOrId);
      if (!role) return;
      guardOwnRole(scope, role.id, 'the admin should not delete their own roles');
      await store.deleteRole(trx, role.id);
    });
  }

  async getRolePermissions(scope: RbacScope, nameOrId: string): Promise<PermissionMap> {
    const role = await this.roleOr404(this.db, scope, nameOrId);
    const perms = await store.permissionsOfRoles(this.db, [role.id]);
    return buildPermissionMap(perms.endpoints, perms.entities);
  }

  // -------------------------------------------------------------------------------------------------------------
  // role endpoint permissions

  async listEndpoints(scope: RbacScope, roleNameOrId: string): Promise<RoleEndpointView[]> {
    const role = await this.roleOr404(this.db, scope, roleNameOrId);
    return (await store.endpointsOfRoles(this.db, [role.id])).map(store.endpointView);
  }

  /** A workspace named in a permission: `*`, or an existing workspace by name or id (stored by name). */
  private async permissionWorkspace(ex: Executor, given: string): Promise<string> {
    if (given === WILDCARD) return WILDCARD;
    const ws = await store.findWorkspace(ex, given);
    if (!ws) throw new HttpError(404, `Workspace ${given} does not exist`);
    return ws.name;
  }

  async addEndpoint(scope: RbacScope, roleNameOrId: string, body: unknown): Promise<RoleEndpointView> {
    const input = parseBody(roleEndpointInput, body);
    const actions = requiredActions(input.actions);
    const endpoint = normalizeEndpoint(input.endpoint);
    return this.write({}, async (trx) => {
      const role = await this.roleOr404(trx, scope, roleNameOrId);
      guardOwnRole(scope, role.id, 'the admin should not update their own roles');
      const workspace = await this.permissionWorkspace(trx, input.workspace ?? scope.workspace.name);
      guardCrossWorkspace(scope, workspace);
      const now = store.nowSeconds();
      const row: EndpointRow = { role_id: role.id, workspace, endpoint, actions, negative: input.negative ?? false, comment: input.comment ?? null, created_at: now, updated_at: now };
      try {
        await store.insertEndpoint(trx, row);
      } catch (err) {
        throw mapRbacSqlError(err, row as never);
      }
      return store.endpointView(row);
    });
  }

  private async endpointOr404(ex: Executor, scope: RbacScope, roleNameOrId: string, workspace: string, endpoint: string) {
    const role = await this.roleOr404(ex, scope, roleNameOrId);
    const wsName = workspace === WILDCARD ? WILDCARD : (await store.findWorkspace(ex, workspace))?.name;
    if (!wsName) throw notFound();
    // the lone-star endpoint is addressed as `…/{ws}/*`, which also reads as `/*`: the lone star is tried first
    const candidates = endpoint === '/*' ? [WILDCARD, '/*'] : [normalizeEndpoint(endpoint)];
    let row: EndpointRow | null = null;
    for (const candidate of candidates) row ??= await store.findEndpoint(ex, role.id, wsName, candidate);
    if (!row) throw notFound();
    return { role, row };
  }

  async getEndpoint(scope: RbacScope, roleNameOrId: string, workspace: string, endpoint: string): Promise<RoleEndpointView> {
    return store.endpointView((await this.endpointOr404(this.db, scope, roleNameOrId, workspace, endpoint)).row);
  }

  async patchEndpoint(scope: RbacScope, roleNameOrId: string, workspace: string, endpoint: string, body: unknown): Promise<RoleEndpointView> {
    const patch = parseBody(roleEndpointPatch, body);
    const actions = patch.actions !== undefined ? requiredActions(patch.actions) : undefined;
    return this.write({}, async (trx) => {
      const { role, row } = await this.endpointOr404(trx, scope, roleNameOrId, workspace, endpoint);
      guardOwnRole(scope, role.id, 'the admin should not update or delete their own endpoints');
      const next: EndpointRow = {
        ...row,
        actions: actions ?? row.actions,
        negative: patch.negative ?? row.negative,
        comment: patch.comment !== undefined ? patch.comment : row.comment,
        updated_at: store.nowSeconds(),
      };
      await store.updateEndpoint(trx, next);
      return store.endpointView(next);
    });
  }

  async deleteEndpoint(scope: RbacScope, roleNameOrId: string, workspace: string, endpoint: string): Promise<void> {
    await this.write({}, async (trx) => {
      const { role, row } = await this.endpointOr404(trx, scope, roleNameOrId, workspace, endpoint);
      guardOwnRole(scope, role.id, 'the admin should not update or delete their own endpoints');
      await store.deleteEndpoint(trx, role.id, row.workspace, row.endpoint);
    });
  }

  async getRoleEndpointPermissions(scope: RbacScope, roleNameOrId: string): Promise<PermissionMap['endpoints']> {
    const role = await this.roleOr404(this.db, scope, roleNameOrId);
    const perms = await store.permissionsOfRoles(this.db, [role.id]);
    return buildPermissionMap(perms.endpoints, []).endpoints;
  }

  // -------------------------------------------------------------------------------------------------------------
  // role entity permissions

  async listEntities(scope: RbacScope, roleNameOrId: string): Promise<RoleEntityView[]> {
    const role = await this.roleOr404(this.db, scope, roleNameOrId);
    return (await store.entitiesOfRoles(this.db, [role.id])).map(store.entityView);
  }

  async addEntity(scope: RbacScope, roleNameOrId: string, body: unknown): Promise<RoleEntityView> {
    const raw = asRecord(body) ?? {};
    if (raw.entity_id === undefined || raw.entity_id === '') throw new HttpError(400, "Missing required parameter: 'entity_id'");
    const input = parseBody(roleEntityInput, body);
    const actions = requiredActions(input.actions);
    const wildcard = input.entity_id === WILDCARD;
    if (!wildcard && !store.isUuid(input.entity_id)) throw new HttpError(400, `${input.entity_id} is not a valid uuid`);
    if (!wildcard && !input.entity_type) throw new HttpError(400, "Missing required parameter: 'entity_type'");
    return this.write({}, async (trx) => {
      const role = await this.roleOr404(trx, scope, roleNameOrId);
      guardOwnRole(scope, role.id, 'the admin should not update their own roles');
      if (!wildcard) {
        const table = this.entityTables().get(input.entity_type!);
        if (!table || !(await store.entityExists(trx, table, input.entity_id))) {
          throw new HttpError(400, `There is no entity of type '${input.entity_type}' with given entity_id`);
        }
      }
      const now = store.nowSeconds();
      const row: EntityRow = {
        role_id: role.id,
        entity_id: input.entity_id,
        entity_type: wildcard ? WILDCARD_ENTITY_TYPE : input.entity_type!,
        actions,
        negative: input.negative ?? false,
        comment: input.comment ?? null,
        created_at: now,
        updated_at: now,
      };
      try {
        await store.insertEntityPermission(trx, row);
      } catch (err) {
        throw mapRbacSqlError(err, row as never);
      }
      return store.entityView(row);
    });
  }

  private async entityPermissionOr404(ex: Executor, scope: RbacScope, roleNameOrId: string, entityId: string) {
    checkEntityId(entityId);
    const role = await this.roleOr404(ex, scope, roleNameOrId);
    const row = await store.findEntityPermission(ex, role.id, entityId);
    if (!row) throw notFound();
    return { role, row };
  }

  async getEntity(scope: RbacScope, roleNameOrId: string, entityId: string): Promise<RoleEntityView> {
    return store.entityView((await this.entityPermissionOr404(this.db, scope, roleNameOrId, entityId)).row);
  }

  async patchEntity(scope: RbacScope, roleNameOrId: string, entityId: string, body: unknown): Promise<RoleEntityView> {
    const patch = parseBody(roleEntityPatch, body);
    const actions = patch.actions !== undefined ? requiredActions(patch.actions) : undefined;
    return this.write({}, async (trx) => {
      const { role, row } = await this.entityPermissionOr404(trx, scope, roleNameOrId, entityId);
      guardOwnRole(scope, role.id, 'the admin should not update or delete their own entities');
      const next: EntityRow = {
        ...row,
        actions: actions ?? row.actions,
        negative: patch.negative ?? row.negative,
        comment: patch.comment !== undefined ? patch.comment : row.comment,
        updated_at: store.nowSeconds(),
      };
      await store.updateEntityPermission(trx, next);
      return store.entityView(next);
    });
  }

  /** 204 also when the permission is absent (Kong). */
  async deleteEntity(scope: RbacScope, roleNameOrId: string, entityId: string): Promise<void> {
    checkEntityId(entityId);
    await this.write({}, async (trx) => {
      const role = await this.roleOr404(trx, scope, roleNameOrId);
      guardOwnRole(scope, role.id, 'the admin should not update or delete their own entities');
      await store.deleteEntityPermission(trx, role.id, entityId);
    });
  }

  async getRoleEntityPermissions(scope: RbacScope, roleNameOrId: string): Promise<PermissionMap['entities']> {
    const role = await this.roleOr404(this.db, scope, roleNameOrId);
    const perms = await store.permissionsOfRoles(this.db, [role.id]);
    return buildPermissionMap([], perms.entities).entities;
  }

  // -------------------------------------------------------------------------------------------------------------
  // admins: an admin owns one RBAC user (named after the admin), hidden from /rbac/users

  listAdmins(size: number, after?: string): Promise<KeyPage<AdminView>> {
    return store.pageAdmins(this.db, size, after).then((p) => ({ items: p.items.map(store.adminView), next: p.next }));
  }

  private async adminOr404(ex: Executor, nameOrId: string) {
    const admin = await store.findAdmin(ex, nameOrId);
    if (!admin) throw notFound();
    return admin;
  }

  async getAdmin(nameOrId: string): Promise<AdminView> {
    return store.adminView(await this.adminOr404(this.db, nameOrId));
  }

  /** The admin's RBAC user gets a random token nobody is told: admins sign in through other means. */
  async createAdmin(scope: RbacScope, body: unknown): Promise<AdminView> {
    const input = parseBody(adminInput, body);
    const user = await this.newUserRow({ name: input.username, user_token: generateToken() });
    const now = store.nowSeconds();
    const admin: store.AdminRow = {
      id: input.id ?? randomUUID(),
      username: input.username,
      custom_id: input.custom_id ?? null,
      email: input.email ?? null,
      status: 0,
      rbac_token_enabled: input.rbac_token_enabled ?? true,
      rbac_user_id: user.id,
      created_at: now,
      updated_at: now,
    };
    return this.write({ ...admin, name: user.name }, async (trx) => {
      await store.insertUser(trx, user);
      await this.attachDefaultRole(trx, user, scope.workspace.id);
      await store.insertAdmin(trx, admin);
      return store.adminView(admin);
    });
  }

  async patchAdmin(nameOrId: string, body: unknown): Promise<AdminView> {
    const patch = parseBody(adminPatch, body);
    return this.write(patch, async (trx) => {
      const admin = await this.adminOr404(trx, nameOrId);
      const next: store.AdminRow = { ...admin, ...definedOnly(patch), updated_at: store.nowSeconds() };
      await store.updateAdmin(trx, next);
      return store.adminView(next);
    });
  }

  async deleteAdmin(scope: RbacScope, nameOrId: string): Promise<void> {
    await this.write({}, async (trx) => {
      const admin = await store.findAdmin(trx, nameOrId);
      if (!admin) return;
      if (scope.caller?.user.id === admin.rbac_user_id) throw new HttpError(403, 'the admin should not delete themselves');
      const user = await store.findUser(trx, admin.rbac_user_id);
      await store.deleteAdmin(trx, admin.id);
      if (user) await this.deleteUserAndDefaultRole(trx, user);
    });
  }

  async getAdminRoles(nameOrId: string): Promise<{ roles: RbacRoleView[] }> {
    const admin = await this.adminOr404(this.db, nameOrId);
    return { roles: visibleRoles(await store.rolesOfUser(this.db, admin.rbac_user_id)) };
  }

  async addAdminRoles(scope: RbacScope, nameOrId: string, body: unknown): Promise<{ roles: RbacRoleView[] }> {
    const names = roleNames(body);
    return this.write({}, async (trx) => {
      const admin = await this.adminOr404(trx, nameOrId);
      guardSelf(scope, admin.rbac_user_id, 'the admin should not update their own roles');
      const held = new Set((await store.rolesOfUser(trx, admin.rbac_user_id)).map((r) => r.id));
      for (const name of names) {
        const role = await store.findRole(trx, scope.workspace.id, name);
        if (!role || role.name !== name) throw new HttpError(400, `role not found with name '${name}'`);
        if (!held.has(role.id)) await store.linkUserRole(trx, admin.rbac_user_id, role.id);
        held.add(role.id);
      }
      return { roles: visibleRoles(await store.rolesOfUser(trx, admin.rbac_user_id)) };
    });
  }

  async deleteAdminRoles(scope: RbacScope, nameOrId: string, body: unknown): Promise<void> {
    const names = roleNames(body);
    await this.write({}, async (trx) => {
      const admin = await this.adminOr404(trx, nameOrId);
      guardSelf(scope, admin.rbac_user_id, 'the admin should not update their own roles');
      const ids: string[] = [];
      for (const name of names) {
        const role = await store.findRole(trx, scope.workspace.id, name);
        if (!role || role.name !== name) throw new HttpError(400, `role not found with name '${name}'`);
        ids.push(role.id);
      }
      await store.unlinkUserRoles(trx, admin.rbac_user_id, ids);
    });
  }

  // -------------------------------------------------------------------------------------------------------------
  // bootstrap

  /**
   * Creates, once, the user `gatehouse-admin` holding the super-admin role, with the given token. When the user
   * exists already nothing changes (its token included): the environment seeds, it does not rotate.
   * Returns true when the user was created.
   */
  async bootstrapSuperAdmin(token: string, name = BOOTSTRAP_USER): Promise<boolean> {
    if (normalizeToken(token) === '') return false;
    if (await store.findUser(this.db, name)) return false;
    const user = await this.newUserRow({ name, user_token: token, comment: 'Created from GATEHOUSE_ADMIN_TOKEN' });
    try {
      await this.write(user as never, async (trx) => {
        const ws = await this.defaultWorkspace(trx);
        await this.assertTokenFree(trx, token);
        await store.insertUser(trx, user);
        await this.attachDefaultRole(trx, user, ws.id);
        const superAdmin = await store.findRole(trx, ws.id, 'super-admin');
        if (!superAdmin) throw new Error('the super-admin role is missing');
        await store.linkUserRole(trx, user.id, superAdmin.id);
      });
    } catch (err) {
      // another control plane created it at the same moment
      if (err instanceof DbError && err.code === ErrorCode.UNIQUE_VIOLATION) return false;
      throw err;
    }
    return true;
  }
}

export const BOOTSTRAP_USER = 'gatehouse-admin';

// ---------------------------------------------------------------------------------------------------------------

function asRecord(body: unknown): Record<string, unknown> | null {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
}

function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function checkWorkspaceName(name: string): void {
  if (RESERVED_WORKSPACE_NAMES.has(name.toLowerCase())) throw schemaViolation({ name: `'${name}' is a reserved name` });
}

function checkEntityId(entityId: string): void {
  if (entityId !== WILDCARD && !store.isUuid(entityId)) throw new HttpError(400, `${entityId} is not a valid uuid`);
}

function requiredActions(input: unknown): number {
  const bits = parseActions(input);
  if (bits === 0) throw schemaViolation({ actions: 'required field missing' });
  return bits & ALL_ACTIONS;
}

/** `roles` as a comma-separated string of names (or an array); at least one. */
function roleNames(body: unknown): string[] {
  const raw = asRecord(body)?.roles;
  const list = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : [];
  const names = list.map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) throw new HttpError(400, 'must provide >= 1 role');
  return [...new Set(names)];
}

function visibleRoles(roles: RoleRow[]): RbacRoleView[] {
  return roles.filter((r) => !r.is_default).map(store.roleView);
}

function guardSelf(scope: RbacScope, userId: string, message: string): void {
  if (scope.caller && scope.caller.user.id === userId) throw new HttpError(403, message);
}

function guardOwnRole(scope: RbacScope, roleId: string, message: string): void {
  if (scope.caller && scope.caller.roles.some((r) => r.id === roleId)) throw new HttpError(403, message);
}

/**
 * A permission for another workspace than the request's needs every action on `*` in that workspace or in `*`
 * (Kong §3.6): otherwise a workspace admin could grant itself rights elsewhere.
 */
function guardCrossWorkspace(scope: RbacScope, target: string): void {
  const caller = scope.caller;
  if (!caller || target === scope.workspace.name) return;
  const full = (ws: string) => {
    const mask = caller.endpointRules.get(ws)?.get(WILDCARD) ?? 0;
    return (mask & ALL_ACTIONS) === ALL_ACTIONS && mask >> 4 === 0;
  };
  if (full(target) || full(WILDCARD)) return;
  throw new HttpError(403, `${caller.user.name} is not allowed to create cross workspace permissions`);
}
