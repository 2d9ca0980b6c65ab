/**
 * The role grants of users and admins and the endpoint and entity permissions of roles (interface.md "RBAC
 * operations", kong-reference Part B §1), with the self-modification and cross-workspace guards. Users, roles and
 * admins are looked up through their kinds, as their own routes look them up. Each write is one transaction.
 */
import { Errors, rbacRoles, rbacUsers, rowOf, schemaViolation, type RbacRole, type RbacUser } from '@gatehouse/core';
import { isUuid } from '../service/references';
import type { Executor } from '../store/entity-repository';
import { ALL_ACTIONS, WILDCARD, buildPermissionMap, normalizeEndpoint, parseActions, type PermissionMap } from './decide';
import { WILDCARD_ENTITY_TYPE, parseBody, roleEndpointInput, roleEndpointPatch, roleEntityInput, roleEntityPatch } from './entities';
import type { RbacScope, RbacService } from './service';
import * as store from './store';
import type { EndpointRow, EntityRow, PermissionFamily } from './store';

export class RolePermissions {
  constructor(private readonly rbac: RbacService) {}

  // ── lookups through the families' own (the routes'); the caller must be allowed to read what the path names ──

  private async userOr404(ex: Executor, scope: RbacScope, ref: string): Promise<RbacUser> {
    const { entities, users } = this.rbac.families;
    const user = await entities.find(users, ref, undefined, ex, scope.access);
    if (!user) throw entities.notFound(users, ref);
    return rowOf(rbacUsers, user) as RbacUser; // the kind stores user_token_ident beside the schema's fields
  }

  private async roleOr404(ex: Executor, scope: RbacScope, ref: string): Promise<RbacRole> {
    const { entities, roles } = this.rbac.families;
    const role = await entities.find(roles, ref, { field: 'workspace', id: scope.workspace.id }, ex, scope.access);
    if (!role) throw Errors.notFound();
    return rowOf(rbacRoles, role) as RbacRole; // the kind stores the role's workspace beside the schema's fields
  }

  private async adminUserOr404(ex: Executor, scope: RbacScope, ref: string): Promise<string> {
    const { entities, admins } = this.rbac.families;
    const admin = await entities.find(admins, ref, undefined, ex, scope.access);
    if (!admin) throw Errors.notFound();
    return (admin.rbac_user as { id: string }).id;
  }

  // ── user ↔ roles (users and admins alike) ──────────────────────────────────

  async getUserRoles(scope: RbacScope, ref: string): Promise<{ user: RbacUser; roles: RbacRole[] }> {
    const user = await this.userOr404(this.rbac.db, scope, ref);
    return { user, roles: visibleRoles(await store.rolesOfUser(this.rbac.db, user.id)) };
  }

  async getAdminRoles(scope: RbacScope, ref: string): Promise<{ roles: RbacRole[] }> {
    const userId = await this.adminUserOr404(this.rbac.db, scope, ref);
    return { roles: visibleRoles(await store.rolesOfUser(this.rbac.db, userId)) };
  }

  /** Grants roles of the request's workspace; a role already held is a primary key violation for users (Kong). */
  async addRoles(scope: RbacScope, holder: 'user' | 'admin', ref: string, body: unknown): Promise<{ user?: RbacUser; roles: RbacRole[] }> {
    const names = roleNames(body);
    return this.rbac.write(async (trx) => {
      const user = holder === 'user' ? await this.userOr404(trx, scope, ref) : null;
      const userId = user?.id ?? (await this.adminUserOr404(trx, scope, ref));
      guardSelf(scope, userId, 'the admin should not update their own roles');
      const held = new Set((await store.rolesOfUser(trx, userId)).map((r) => r.id));
      for (const role of await this.rolesNamed(trx, scope, names)) {
        if (held.has(role.id)) {
          if (user) throw Errors.primaryKey({ role: { id: role.id }, user: { id: userId } });
          continue;
        }
        await store.linkUserRole(trx, userId, role.id);
        held.add(role.id);
      }
      const roles = visibleRoles(await store.rolesOfUser(trx, userId));
      return user ? { user, roles } : { roles };
    });
  }

  async removeRoles(scope: RbacScope, holder: 'user' | 'admin', ref: string, body: unknown): Promise<void> {
    const names = roleNames(body);
    await this.rbac.write(async (trx) => {
      const userId = holder === 'user' ? (await this.userOr404(trx, scope, ref)).id : await this.adminUserOr404(trx, scope, ref);
      guardSelf(scope, userId, 'the admin should not update their own roles');
      await store.unlinkUserRoles(trx, userId, (await this.rolesNamed(trx, scope, names)).map((r) => r.id));
    });
  }

  private async rolesNamed(trx: Executor, scope: RbacScope, names: string[]): Promise<RbacRole[]> {
    const roles: RbacRole[] = [];
    for (const name of names) {
      const role = await store.findRole(trx, scope.workspace.id, name);
      if (!role || role.name !== name) throw Errors.badRequest(`role not found with name '${name}'`);
      roles.push(role);
    }
    return roles;
  }

  async getUserPermissions(scope: RbacScope, ref: string): Promise<PermissionMap> {
    const user = await this.userOr404(this.rbac.db, scope, ref);
    const roles = await store.rolesOfUser(this.rbac.db, user.id);
    const perms = await store.permissionsOfRoles(this.rbac.db, roles.map((r) => r.id));
    return buildPermissionMap(perms.endpoints, perms.entities);
  }

  /** a role's permissions as Kong's map: both families, or one */
  async getRolePermissions(scope: RbacScope, ref: string, only?: PermissionFamily): Promise<Partial<PermissionMap>> {
    const role = await this.roleOr404(this.rbac.db, scope, ref);
    const perms = await store.permissionsOfRoles(this.rbac.db, [role.id]);
    const map = buildPermissionMap(only === 'entities' ? [] : perms.endpoints, only === 'endpoints' ? [] : perms.entities);
    return only ? { [only]: map[only] } : map;
  }

  // ── role permissions ───────────────────────────────────────────────────────

  async listPermissions(scope: RbacScope, family: PermissionFamily, roleRef: string): Promise<Record<string, unknown>[]> {
    const role = await this.roleOr404(this.rbac.db, scope, roleRef);
    return (await store.permissionsOf(this.rbac.db, family, [role.id])).map(store.permissionView);
  }

  /** A workspace named in a permission: `*`, or an existing workspace by name or id (stored by name). */
  private async permissionWorkspace(ex: Executor, given: string): Promise<string> {
    if (given === WILDCARD) return WILDCARD;
    const ws = await store.findWorkspace(ex, given);
    if (!ws) throw Errors.notFoundNamed(`Workspace ${given} does not exist`);
    return ws.name;
  }

  async addEndpoint(scope: RbacScope, roleRef: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseBody(roleEndpointInput, body);
    const actions = requiredActions(input.actions);
    const endpoint = normalizeEndpoint(input.endpoint);
    let row: EndpointRow | undefined;
    await this.rbac.write(async (trx) => {
      const role = await this.roleOr404(trx, scope, roleRef);
      guardOwnRole(scope, role.id, 'the admin should not update their own roles');
      const workspace = await this.permissionWorkspace(trx, input.workspace ?? scope.workspace.name);
      guardCrossWorkspace(scope, workspace);
      const now = store.nowSeconds();
      row = { role_id: role.id, workspace, endpoint, actions, negative: input.negative ?? false, comment: input.comment ?? null, created_at: now, updated_at: now };
      await store.insertPermission(trx, 'endpoints', row);
    }, () => (row ? { ...row } : undefined));
    return store.permissionView(row!);
  }

  /** the key of an endpoint permission as its URL gives it: a workspace by name or id, the endpoint normalised */
  private async endpointKey(ex: Executor, workspace: string, endpoint: string): Promise<string[][]> {
    const wsName = workspace === WILDCARD ? WILDCARD : (await store.findWorkspace(ex, workspace))?.name;
    if (!wsName) throw Errors.notFound();
    // the lone-star endpoint is addressed as `…/{ws}/*`, which also reads as `/*`: the lone star is tried first
    return (endpoint === '/*' ? [WILDCARD, '/*'] : [normalizeEndpoint(endpoint)]).map((e) => [wsName, e]);
  }

  private async permissionOr404(ex: Executor, scope: RbacScope, family: PermissionFamily, roleRef: string, key: string[]): Promise<{ role: RbacRole; row: EndpointRow | EntityRow }> {
    if (family === 'entities') checkEntityId(key[0]!);
    const role = await this.roleOr404(ex, scope, roleRef);
    const candidates = family === 'endpoints' ? await this.endpointKey(ex, key[0]!, key[1]!) : [key];
    for (const candidate of candidates) {
      const row = await store.findPermission(ex, family, role.id, candidate);
      if (row) return { role, row };
    }
    throw Errors.notFound();
  }

  async getPermission(scope: RbacScope, family: PermissionFamily, roleRef: string, key: string[]): Promise<Record<string, unknown>> {
    return store.permissionView((await this.permissionOr404(this.rbac.db, scope, family, roleRef, key)).row);
  }

  async patchPermission(scope: RbacScope, family: PermissionFamily, roleRef: string, key: string[], body: unknown): Promise<Record<string, unknown>> {
    const patch = parseBody(family === 'endpoints' ? roleEndpointPatch : roleEntityPatch, body);
    const actions = patch.actions !== undefined ? requiredActions(patch.actions) : undefined;
    return this.rbac.write(async (trx) => {
      const { role, row } = await this.permissionOr404(trx, scope, family, roleRef, key);
      guardOwnRole(scope, role.id, `the admin should not update or delete their own ${family}`);
      const next = {
        ...row,
        actions: actions ?? row.actions,
        negative: patch.negative ?? row.negative,
        comment: patch.comment !== undefined ? patch.comment : row.comment,
        updated_at: store.nowSeconds(),
      };
      await store.updatePermission(trx, family, next);
      return store.permissionView(next);
    });
  }

  /** endpoints: 404 when absent; entities: 204 also when absent (Kong) */
  async deletePermission(scope: RbacScope, family: PermissionFamily, roleRef: string, key: string[]): Promise<void> {
    await this.rbac.write(async (trx) => {
      if (family === 'endpoints') {
        const { role, row } = await this.permissionOr404(trx, scope, family, roleRef, key);
        guardOwnRole(scope, role.id, 'the admin should not update or delete their own endpoints');
        await store.deletePermission(trx, family, role.id, [(row as EndpointRow).workspace, (row as EndpointRow).endpoint]);
        return;
      }
      checkEntityId(key[0]!);
      const role = await this.roleOr404(trx, scope, roleRef);
      guardOwnRole(scope, role.id, 'the admin should not update or delete their own entities');
      await store.deletePermission(trx, family, role.id, key);
    });
  }

  async addEntity(scope: RbacScope, roleRef: string, body: unknown): Promise<Record<string, unknown>> {
    const raw = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    if (raw.entity_id === undefined || raw.entity_id === '') throw Errors.badRequest("Missing required parameter: 'entity_id'");
    const input = parseBody(roleEntityInput, body);
    const actions = requiredActions(input.actions);
    const wildcard = input.entity_id === WILDCARD;
    checkEntityId(input.entity_id);
    if (!wildcard && !input.entity_type) throw Errors.badRequest("Missing required parameter: 'entity_type'");
    let row: EntityRow | undefined;
    await this.rbac.write(async (trx) => {
      const role = await this.roleOr404(trx, scope, roleRef);
      guardOwnRole(scope, role.id, 'the admin should not update their own roles');
      if (!wildcard && !(this.rbac.configTables().includes(input.entity_type!) && (await store.entityExists(trx, input.entity_type!, input.entity_id)))) {
        throw Errors.badRequest(`There is no entity of type '${input.entity_type}' with given entity_id`);
      }
      const now = store.nowSeconds();
      row = { role_id: role.id, entity_id: input.entity_id, entity_type: wildcard ? WILDCARD_ENTITY_TYPE : input.entity_type!, actions, negative: input.negative ?? false, comment: input.comment ?? null, created_at: now, updated_at: now };
      await store.insertPermission(trx, 'entities', row);
    }, () => (row ? { ...row } : undefined));
    return store.permissionView(row!);
  }
}

function checkEntityId(entityId: string): void {
  if (entityId !== WILDCARD && !isUuid(entityId)) throw Errors.badRequest(`${entityId} is not a valid uuid`);
}

function requiredActions(input: unknown): number {
  const bits = parseActions(input);
  if (bits === 0) throw schemaViolation({ actions: 'required field missing' });
  return bits & ALL_ACTIONS;
}

/** `roles` as a comma-separated string of names (or an array); at least one. */
function roleNames(body: unknown): string[] {
  const raw = body && typeof body === 'object' ? (body as Record<string, unknown>).roles : undefined;
  const list = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : [];
  const names = list.map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) throw Errors.badRequest('must provide >= 1 role');
  return [...new Set(names)];
}

/** roles as the admin API lists them: not the default ones, without their workspace */
function visibleRoles(roles: RbacRole[]): RbacRole[] {
  return roles.filter((r) => !r.is_default).map(({ workspace: _ws, ...role }) => role as RbacRole);
}

function guardSelf(scope: RbacScope, userId: string, message: string): void {
  if (scope.caller && scope.caller.user.id === userId) throw Errors.forbidden(message);
}

function guardOwnRole(scope: RbacScope, roleId: string, message: string): void {
  if (scope.caller && scope.caller.roles.some((r) => r.id === roleId)) throw Errors.forbidden(message);
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
  throw Errors.forbidden(`${caller.user.name} is not allowed to create cross workspace permissions`);
}
