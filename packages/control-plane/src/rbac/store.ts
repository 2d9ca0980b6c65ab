/**
 * Rows of the workspace and RBAC tables (see rbac/migrations.ts). Plain data access: no validation, no hashing,
 * no permission logic. Every function takes the executor to run on, so callers put several in one transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { EndpointPermission, EntityPermission } from './decide';
import type { AdminView, RbacRoleView, RbacUserView, RoleEndpointView, RoleEntityView, WorkspaceView } from './entities';
import { actionNames } from './decide';

export type Executor = Kysely<any>;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A page of rows ordered by a key, continuing after `after`. */
export interface KeyPage<T> {
  items: T[];
  /** the key to continue after, when there are more */
  next: string | null;
}

const num = (v: unknown) => Number(v);
const json = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v) : ((v as Record<string, unknown>) ?? {}));

// ---------------------------------------------------------------------------------------------------------------
// workspaces

export type WorkspaceRow = WorkspaceView;

function workspaceOf(r: any): WorkspaceRow {
  return {
    id: r.id,
    name: r.name,
    comment: r.comment ?? null,
    config: json(r.config),
    meta: json(r.meta),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export async function findWorkspace(ex: Executor, nameOrId: string): Promise<WorkspaceRow | null> {
  const q = ex.selectFrom('workspaces').selectAll();
  const row = await (isUuid(nameOrId) ? q.where('id', '=', nameOrId) : q.where('name', '=', nameOrId)).executeTakeFirst();
  return row ? workspaceOf(row) : null;
}

export async function workspacesByIds(ex: Executor, ids: string[]): Promise<WorkspaceRow[]> {
  if (ids.length === 0) return [];
  return (await ex.selectFrom('workspaces').selectAll().where('id', 'in', ids).execute()).map(workspaceOf);
}

export async function pageWorkspaces(ex: Executor, size: number, after?: string): Promise<KeyPage<WorkspaceRow>> {
  let q = ex.selectFrom('workspaces').selectAll().orderBy('id').limit(size + 1);
  if (after) q = q.where('id', '>', after);
  return pageOf((await q.execute()).map(workspaceOf), size, (w) => w.id);
}

export async function insertWorkspace(ex: Executor, w: WorkspaceRow): Promise<void> {
  await ex
    .insertInto('workspaces')
    .values({ ...w, config: sql`${JSON.stringify(w.config)}::jsonb`, meta: sql`${JSON.stringify(w.meta)}::jsonb` })
    .execute();
}

export async function updateWorkspace(ex: Executor, w: WorkspaceRow): Promise<void> {
  const { id, ...rest } = w;
  await ex
    .updateTable('workspaces')
    .set({ ...rest, config: sql`${JSON.stringify(w.config)}::jsonb`, meta: sql`${JSON.stringify(w.meta)}::jsonb` })
    .where('id', '=', id)
    .execute();
}

export async function deleteWorkspace(ex: Executor, id: string): Promise<void> {
  await ex.deleteFrom('workspaces').where('id', '=', id).execute();
}

/**
 * How many entities (still present in one of the given tables) and roles live in a workspace. Records of
 * entities deleted since are dropped on the way, so they do not keep the workspace from being deleted.
 */
export async function workspaceContentCount(ex: Executor, wsId: string, tables: string[]): Promise<number> {
  let live = 0;
  for (const table of tables) {
    const row = await ex
      .selectFrom('workspace_entities as we')
      .innerJoin(`${table} as t`, 't.id', 'we.entity_id')
      .select(sql<number>`count(*)`.as('n'))
      .where('we.ws_id', '=', wsId)
      .executeTakeFirst();
    live += num(row?.n ?? 0);
  }
  const roles = await ex.selectFrom('rbac_roles').select(sql<number>`count(*)`.as('n')).where('ws_id', '=', wsId).executeTakeFirst();
  live += num(roles?.n ?? 0);
  if (live === 0) await ex.deleteFrom('workspace_entities').where('ws_id', '=', wsId).execute();
  return live;
}

/** Endpoint permissions name workspaces by name: a rename carries them along. */
export async function renameWorkspaceInPermissions(ex: Executor, from: string, to: string): Promise<void> {
  await ex.updateTable('rbac_role_endpoints').set({ workspace: to }).where('workspace', '=', from).execute();
}

export async function recordEntityWorkspace(ex: Executor, entityId: string, entityType: string, wsId: string): Promise<void> {
  await ex
    .insertInto('workspace_entities')
    .values({ entity_id: entityId, entity_type: entityType, ws_id: wsId })
    .onConflict((oc) => oc.column('entity_id').doNothing())
    .execute();
}

export async function forgetEntityWorkspace(ex: Executor, entityIds: string[]): Promise<void> {
  if (entityIds.length === 0) return;
  await ex.deleteFrom('workspace_entities').where('entity_id', 'in', entityIds).execute();
}

/** entity id → workspace id, for the ids that have a recorded workspace */
export async function entityWorkspaces(ex: Executor, entityIds: string[]): Promise<Map<string, string>> {
  const ids = entityIds.filter(isUuid);
  if (ids.length === 0) return new Map();
  const rows = await ex.selectFrom('workspace_entities').select(['entity_id', 'ws_id']).where('entity_id', 'in', ids).execute();
  return new Map(rows.map((r: any) => [String(r.entity_id), String(r.ws_id)]));
}

// ---------------------------------------------------------------------------------------------------------------
// users

export type UserRow = RbacUserView;

function userOf(r: any): UserRow {
  return {
    id: r.id,
    name: r.name,
    user_token: r.user_token,
    user_token_ident: r.user_token_ident,
    comment: r.comment ?? null,
    enabled: Boolean(r.enabled),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export async function findUser(ex: Executor, nameOrId: string): Promise<UserRow | null> {
  const q = ex.selectFrom('rbac_users').selectAll();
  const row = await (isUuid(nameOrId) ? q.where('id', '=', nameOrId) : q.where('name', '=', nameOrId)).executeTakeFirst();
  return row ? userOf(row) : null;
}

/** Users whose token has this ident, enabled ones only when asked (disabled users never authenticate). */
export async function usersByIdent(ex: Executor, ident: string, enabledOnly: boolean): Promise<UserRow[]> {
  let q = ex.selectFrom('rbac_users').selectAll().where('user_token_ident', '=', ident);
  if (enabledOnly) q = q.where('enabled', '=', true);
  return (await q.execute()).map(userOf);
}

/** Users not owned by an admin, ordered by id. */
export async function pageUsers(ex: Executor, size: number, after?: string): Promise<KeyPage<UserRow>> {
  let q = ex
    .selectFrom('rbac_users')
    .selectAll()
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('admins').select('admins.id').whereRef('admins.rbac_user_id', '=', 'rbac_users.id'))))
    .orderBy('id')
    .limit(size + 1);
  if (after) q = q.where('id', '>', after);
  return pageOf((await q.execute()).map(userOf), size, (u) => u.id);
}

export async function insertUser(ex: Executor, u: UserRow): Promise<void> {
  await ex.insertInto('rbac_users').values({ ...u }).execute();
}

export async function updateUser(ex: Executor, u: UserRow): Promise<void> {
  const { id, ...rest } = u;
  await ex.updateTable('rbac_users').set(rest).where('id', '=', id).execute();
}

export async function deleteUser(ex: Executor, id: string): Promise<void> {
  await ex.deleteFrom('rbac_users').where('id', '=', id).execute();
}

export async function isAdminUser(ex: Executor, userId: string): Promise<boolean> {
  return (await ex.selectFrom('admins').select('id').where('rbac_user_id', '=', userId).executeTakeFirst()) !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// roles

export interface RoleRow extends RbacRoleView {
  ws_id: string;
}

function roleOf(r: any): RoleRow {
  return {
    id: r.id,
    ws_id: r.ws_id,
    name: r.name,
    comment: r.comment ?? null,
    is_default: Boolean(r.is_default),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export function roleView(r: RoleRow): RbacRoleView {
  const { ws_id: _ws, ...view } = r;
  return view;
}

/** A role of one workspace, by id or by name. */
export async function findRole(ex: Executor, wsId: string, nameOrId: string): Promise<RoleRow | null> {
  const q = ex.selectFrom('rbac_roles').selectAll().where('ws_id', '=', wsId);
  const row = await (isUuid(nameOrId) ? q.where('id', '=', nameOrId) : q.where('name', '=', nameOrId)).executeTakeFirst();
  return row ? roleOf(row) : null;
}

export async function findRoleById(ex: Executor, id: string): Promise<RoleRow | null> {
  const row = await ex.selectFrom('rbac_roles').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? roleOf(row) : null;
}

/** Roles of a workspace that are not per-user default roles, ordered by id. */
export async function pageRoles(ex: Executor, wsId: string, size: number, after?: string): Promise<KeyPage<RoleRow>> {
  let q = ex.selectFrom('rbac_roles').selectAll().where('ws_id', '=', wsId).where('is_default', '=', false).orderBy('id').limit(size + 1);
  if (after) q = q.where('id', '>', after);
  return pageOf((await q.execute()).map(roleOf), size, (r) => r.id);
}

export async function insertRole(ex: Executor, r: RoleRow): Promise<void> {
  await ex.insertInto('rbac_roles').values({ ...r }).execute();
}

export async function updateRole(ex: Executor, r: RoleRow): Promise<void> {
  const { id, ...rest } = r;
  await ex.updateTable('rbac_roles').set(rest).where('id', '=', id).execute();
}

export async function deleteRole(ex: Executor, id: string): Promise<void> {
  await ex.deleteFrom('rbac_roles').where('id', '=', id).execute();
}

// ---------------------------------------------------------------------------------------------------------------
// user ↔ role

/** Every role of a user, default role included, in any workspace. */
export async function rolesOfUser(ex: Executor, userId: string): Promise<RoleRow[]> {
  const rows = await ex
    .selectFrom('rbac_user_roles as ur')
    .innerJoin('rbac_roles as r', 'r.id', 'ur.role_id')
    .selectAll('r')
    .where('ur.user_id', '=', userId)
    .orderBy('r.name')
    .execute();
  return rows.map(roleOf);
}

export async function linkUserRole(ex: Executor, userId: string, roleId: string): Promise<void> {
  await ex.insertInto('rbac_user_roles').values({ user_id: userId, role_id: roleId, role_source: 'local' }).execute();
}

export async function unlinkUserRoles(ex: Executor, userId: string, roleIds: string[]): Promise<void> {
  if (roleIds.length === 0) return;
  await ex.deleteFrom('rbac_user_roles').where('user_id', '=', userId).where('role_id', 'in', roleIds).execute();
}

export async function roleHolderCount(ex: Executor, roleId: string): Promise<number> {
  const row = await ex.selectFrom('rbac_user_roles').select(sql<number>`count(*)`.as('n')).where('role_id', '=', roleId).executeTakeFirst();
  return num(row?.n ?? 0);
}

// ---------------------------------------------------------------------------------------------------------------
// role endpoint permissions

export interface EndpointRow {
  role_id: string;
  workspace: string;
  endpoint: string;
  actions: number;
  negative: boolean;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

function endpointOf(r: any): EndpointRow {
  return {
    role_id: r.role_id,
    workspace: r.workspace,
    endpoint: r.endpoint,
    actions: num(r.actions),
    negative: Boolean(r.negative),
    comment: r.comment ?? null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export function endpointView(r: EndpointRow): RoleEndpointView {
  return {
    role: { id: r.role_id },
    workspace: r.workspace,
    endpoint: r.endpoint,
    actions: actionNames(r.actions),
    negative: r.negative,
    comment: r.comment,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function findEndpoint(ex: Executor, roleId: string, workspace: string, endpoint: string): Promise<EndpointRow | null> {
  const row = await ex
    .selectFrom('rbac_role_endpoints')
    .selectAll()
    .where('role_id', '=', roleId)
    .where('workspace', '=', workspace)
    .where('endpoint', '=', endpoint)
    .executeTakeFirst();
  return row ? endpointOf(row) : null;
}

export async function endpointsOfRoles(ex: Executor, roleIds: string[]): Promise<EndpointRow[]> {
  if (roleIds.length === 0) return [];
  const rows = await ex
    .selectFrom('rbac_role_endpoints')
    .selectAll()
    .where('role_id', 'in', roleIds)
    .orderBy('workspace')
    .orderBy('endpoint')
    .execute();
  return rows.map(endpointOf);
}

export async function insertEndpoint(ex: Executor, r: EndpointRow): Promise<void> {
  await ex.insertInto('rbac_role_endpoints').values({ ...r }).execute();
}

export async function updateEndpoint(ex: Executor, r: EndpointRow): Promise<void> {
  await ex
    .updateTable('rbac_role_endpoints')
    .set({ actions: r.actions, negative: r.negative, comment: r.comment, updated_at: r.updated_at })
    .where('role_id', '=', r.role_id)
    .where('workspace', '=', r.workspace)
    .where('endpoint', '=', r.endpoint)
    .execute();
}

export async function deleteEndpoint(ex: Executor, roleId: string, workspace: string, endpoint: string): Promise<void> {
  await ex
    .deleteFrom('rbac_role_endpoints')
    .where('role_id', '=', roleId)
    .where('workspace', '=', workspace)
    .where('endpoint', '=', endpoint)
    .execute();
}

// ---------------------------------------------------------------------------------------------------------------
// role entity permissions

export interface EntityRow {
  role_id: string;
  entity_id: string;
  entity_type: string;
  actions: number;
  negative: boolean;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

function entityOf(r: any): EntityRow {
  return {
    role_id: r.role_id,
    entity_id: r.entity_id,
    entity_type: r.entity_type,
    actions: num(r.actions),
    negative: Boolean(r.negative),
    comment: r.comment ?? null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export function entityView(r: EntityRow): RoleEntityView {
  return {
    role: { id: r.role_id },
    entity_id: r.entity_id,
    entity_type: r.entity_type,
    actions: actionNames(r.actions),
    negative: r.negative,
    comment: r.comment,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function findEntityPermission(ex: Executor, roleId: string, entityId: string): Promise<EntityRow | null> {
  const row = await ex
    .selectFrom('rbac_role_entities')
    .selectAll()
    .where('role_id', '=', roleId)
    .where('entity_id', '=', entityId)
    .executeTakeFirst();
  return row ? entityOf(row) : null;
}

export async function entitiesOfRoles(ex: Executor, roleIds: string[]): Promise<EntityRow[]> {
  if (roleIds.length === 0) return [];
  const rows = await ex.selectFrom('rbac_role_entities').selectAll().where('role_id', 'in', roleIds).orderBy('entity_id').execute();
  return rows.map(entityOf);
}

export async function insertEntityPermission(ex: Executor, r: EntityRow): Promise<void> {
  await ex.insertInto('rbac_role_entities').values({ ...r }).execute();
}

export async function insertEntityPermissionIfAbsent(ex: Executor, r: EntityRow): Promise<void> {
  await ex
    .insertInto('rbac_role_entities')
    .values({ ...r })
    .onConflict((oc) => oc.columns(['role_id', 'entity_id']).doNothing())
    .execute();
}

export async function updateEntityPermission(ex: Executor, r: EntityRow): Promise<void> {
  await ex
    .updateTable('rbac_role_entities')
    .set({ actions: r.actions, negative: r.negative, comment: r.comment, updated_at: r.updated_at })
    .where('role_id', '=', r.role_id)
    .where('entity_id', '=', r.entity_id)
    .execute();
}

export async function deleteEntityPermission(ex: Executor, roleId: string, entityId: string): Promise<void> {
  await ex.deleteFrom('rbac_role_entities').where('role_id', '=', roleId).where('entity_id', '=', entityId).execute();
}

/** Entity permissions naming entities that no longer exist go with them. */
export async function deleteEntityPermissionsFor(ex: Executor, entityIds: string[]): Promise<void> {
  if (entityIds.length === 0) return;
  await ex.deleteFrom('rbac_role_entities').where('entity_id', 'in', entityIds).execute();
}

/** true when a row with this id exists in the table (the table name comes from a fixed list, never from input) */
export async function entityExists(ex: Executor, table: string, id: string): Promise<boolean> {
  const row = await ex.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// admins

export interface AdminRow extends Omit<AdminView, 'rbac_user'> {
  rbac_user_id: string;
}

function adminOf(r: any): AdminRow {
  return {
    id: r.id,
    username: r.username,
    custom_id: r.custom_id ?? null,
    email: r.email ?? null,
    status: num(r.status),
    rbac_token_enabled: Boolean(r.rbac_token_enabled),
    rbac_user_id: r.rbac_user_id,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export function adminView(a: AdminRow): AdminView {
  const { rbac_user_id, ...rest } = a;
  return { ...rest, rbac_user: { id: rbac_user_id } };
}

export async function findAdmin(ex: Executor, nameOrId: string): Promise<AdminRow | null> {
  const q = ex.selectFrom('admins').selectAll();
  const row = await (isUuid(nameOrId) ? q.where('id', '=', nameOrId) : q.where('username', '=', nameOrId)).executeTakeFirst();
  return row ? adminOf(row) : null;
}

export async function findAdminByUser(ex: Executor, userId: string): Promise<AdminRow | null> {
  const row = await ex.selectFrom('admins').selectAll().where('rbac_user_id', '=', userId).executeTakeFirst();
  return row ? adminOf(row) : null;
}

export async function pageAdmins(ex: Executor, size: number, after?: string): Promise<KeyPage<AdminRow>> {
  let q = ex.selectFrom('admins').selectAll().orderBy('id').limit(size + 1);
  if (after) q = q.where('id', '>', after);
  return pageOf((await q.execute()).map(adminOf), size, (a) => a.id);
}

export async function insertAdmin(ex: Executor, a: AdminRow): Promise<void> {
  await ex.insertInto('admins').values({ ...a }).execute();
}

export async function updateAdmin(ex: Executor, a: AdminRow): Promise<void> {
  const { id, ...rest } = a;
  await ex.updateTable('admins').set(rest).where('id', '=', id).execute();
}

export async function deleteAdmin(ex: Executor, id: string): Promise<void> {
  await ex.deleteFrom('admins').where('id', '=', id).execute();
}

// ---------------------------------------------------------------------------------------------------------------

/** The permissions a set of roles grants, in decide()'s shape. */
export async function permissionsOfRoles(
  ex: Executor,
  roleIds: string[],
): Promise<{ endpoints: EndpointPermission[]; entities: EntityPermission[] }> {
  const [endpoints, entities] = [await endpointsOfRoles(ex, roleIds), await entitiesOfRoles(ex, roleIds)];
  return {
    endpoints: endpoints.map((e) => ({ workspace: e.workspace, endpoint: e.endpoint, actions: e.actions, negative: e.negative })),
    entities: entities.map((e) => ({ entity_id: e.entity_id, entity_type: e.entity_type, actions: e.actions, negative: e.negative })),
  };
}

function pageOf<T>(rows: T[], size: number, keyOf: (row: T) => string): KeyPage<T> {
  const more = rows.length > size;
  const items = rows.slice(0, size);
  return { items, next: more && items.length > 0 ? keyOf(items[items.length - 1]!) : null };
}
