/**
 * RBAC's reads and the rows of its relation tables (see rbac/migrations.ts). Workspaces, users, roles and admins are
 * entity tables (rbac/kinds.ts); what is here reads them for the middleware and keeps the tables no entity owns:
 * user ↔ role links, endpoint and entity permissions, and the workspace each entity was created in.
 * Every function takes the executor to run on, so callers put several in one transaction.
 */
import { sql } from 'kysely';
import { admins, rbacRoles, rbacUsers, workspaces, type RbacRole, type RbacUser, type Workspace } from '@gatehouse/core';
import type { Executor } from '../store/entity-repository';
import { isUuid } from '../service/references';
import type { EndpointPermission, EntityPermission } from './decide';
import { actionNames } from './decide';

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

async function entityWhere<T>(ex: Executor, table: string, column: string, value: string, extra?: [string, string]): Promise<T | null> {
  let q = ex.selectFrom(table).select('entity').where(column, '=', value);
  if (extra) q = q.where(extra[0], '=', extra[1]);
  const row = await q.executeTakeFirst();
  return row ? (row.entity as T) : null;
}

// ── workspaces ─────────────────────────────────────────────────────────────

export function findWorkspace(ex: Executor, nameOrId: string): Promise<Workspace | null> {
  return entityWhere<Workspace>(ex, workspaces.name, isUuid(nameOrId) ? 'id' : 'name', nameOrId);
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
    live += Number(row?.n ?? 0);
  }
  const roles = await ex.selectFrom(rbacRoles.name).select(sql<number>`count(*)`.as('n')).where('workspace_id', '=', wsId).executeTakeFirst();
  live += Number(roles?.n ?? 0);
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

/** entity id → workspace id, for the ids that have a recorded workspace */
export async function entityWorkspaces(ex: Executor, entityIds: string[]): Promise<Map<string, string>> {
  const ids = entityIds.filter(isUuid);
  if (ids.length === 0) return new Map();
  const rows = await ex.selectFrom('workspace_entities').select(['entity_id', 'ws_id']).where('entity_id', 'in', ids).execute();
  return new Map(rows.map((r) => [String(r.entity_id), String(r.ws_id)]));
}

// ── users and roles ────────────────────────────────────────────────────────

export function findUser(ex: Executor, nameOrId: string): Promise<RbacUser | null> {
  return entityWhere<RbacUser>(ex, rbacUsers.name, isUuid(nameOrId) ? 'id' : 'name', nameOrId);
}

/** Users whose token has this ident, enabled ones only when asked (disabled users never authenticate). */
export async function usersByIdent(ex: Executor, ident: string, enabledOnly: boolean): Promise<RbacUser[]> {
  const rows = await ex.selectFrom(rbacUsers.name).select('entity').where(sql<string>`entity ->> 'user_token_ident'`, '=', ident).execute();
  const users = rows.map((r) => r.entity as RbacUser);
  return enabledOnly ? users.filter((u) => u.enabled) : users;
}

export async function isAdminUser(ex: Executor, userId: string): Promise<boolean> {
  return (await ex.selectFrom(admins.name).select('id').where('rbac_user_id', '=', userId).executeTakeFirst()) !== undefined;
}

/** A role of one workspace, by id or by name. */
export function findRole(ex: Executor, wsId: string, nameOrId: string): Promise<RbacRole | null> {
  return entityWhere<RbacRole>(ex, rbacRoles.name, isUuid(nameOrId) ? 'id' : 'name', nameOrId, ['workspace_id', wsId]);
}

/** Every role of a user, default role included, in any workspace. */
export async function rolesOfUser(ex: Executor, userId: string): Promise<RbacRole[]> {
  const rows = await ex
    .selectFrom('rbac_user_roles as ur')
    .innerJoin(`${rbacRoles.name} as r`, 'r.id', 'ur.role_id')
    .select('r.entity')
    .where('ur.user_id', '=', userId)
    .orderBy('r.name')
    .execute();
  return rows.map((r) => r.entity as RbacRole);
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
  return Number(row?.n ?? 0);
}

// ── permissions ────────────────────────────────────────────────────────────

interface PermissionRow {
  role_id: string;
  actions: number;
  negative: boolean;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

export interface EndpointRow extends PermissionRow {
  workspace: string;
  endpoint: string;
}

export interface EntityRow extends PermissionRow {
  entity_id: string;
  entity_type: string;
}

/** the table of each permission family and the columns of its key (beside role_id) */
const PERMISSION_TABLES = {
  endpoints: { table: 'rbac_role_endpoints', key: ['workspace', 'endpoint'] },
  entities: { table: 'rbac_role_entities', key: ['entity_id'] },
} as const;
export type PermissionFamily = keyof typeof PERMISSION_TABLES;
type RowOf<F extends PermissionFamily> = F extends 'endpoints' ? EndpointRow : EntityRow;

function rowOf<F extends PermissionFamily>(r: Record<string, unknown>): RowOf<F> {
  return { ...r, actions: Number(r.actions), negative: Boolean(r.negative), comment: (r.comment as string | null) ?? null, created_at: Number(r.created_at), updated_at: Number(r.updated_at) } as RowOf<F>;
}

/** What the admin API returns for a permission row: the role as a reference, actions by name. */
export function permissionView(r: EndpointRow | EntityRow): Record<string, unknown> {
  const { role_id, actions, ...rest } = r;
  return { role: { id: role_id }, ...rest, actions: actionNames(actions) };
}

export async function findPermission<F extends PermissionFamily>(ex: Executor, family: F, roleId: string, key: string[]): Promise<RowOf<F> | null> {
  const { table, key: columns } = PERMISSION_TABLES[family];
  let q = ex.selectFrom(table).selectAll().where('role_id', '=', roleId);
  columns.forEach((column, i) => (q = q.where(column, '=', key[i]!)));
  const row = await q.executeTakeFirst();
  return row ? rowOf<F>(row) : null;
}

export async function permissionsOf<F extends PermissionFamily>(ex: Executor, family: F, roleIds: string[]): Promise<Array<RowOf<F>>> {
  if (roleIds.length === 0) return [];
  const { table, key } = PERMISSION_TABLES[family];
  let q = ex.selectFrom(table).selectAll().where('role_id', 'in', roleIds);
  for (const column of key) q = q.orderBy(column);
  return (await q.execute()).map((r) => rowOf<F>(r));
}

export async function insertPermission(ex: Executor, family: PermissionFamily, row: EndpointRow | EntityRow, ifAbsent = false): Promise<void> {
  const { table, key } = PERMISSION_TABLES[family];
  const insert = ex.insertInto(table).values({ ...row });
  await (ifAbsent ? insert.onConflict((oc) => oc.columns(['role_id', ...key]).doNothing()) : insert).execute();
}

export async function updatePermission(ex: Executor, family: PermissionFamily, row: EndpointRow | EntityRow): Promise<void> {
  const { table, key } = PERMISSION_TABLES[family];
  let q = ex.updateTable(table).set({ actions: row.actions, negative: row.negative, comment: row.comment, updated_at: row.updated_at }).where('role_id', '=', row.role_id);
  const fields: Record<string, unknown> = { ...row };
  for (const column of key) q = q.where(column, '=', String(fields[column]));
  await q.execute();
}

export async function deletePermission(ex: Executor, family: PermissionFamily, roleId: string, keyValues: string[]): Promise<void> {
  const { table, key } = PERMISSION_TABLES[family];
  let q = ex.deleteFrom(table).where('role_id', '=', roleId);
  key.forEach((column, i) => (q = q.where(column, '=', keyValues[i]!)));
  await q.execute();
}

/** true when a row with this id exists in the table (the table name comes from registered entities, never from input) */
export async function entityExists(ex: Executor, table: string, id: string): Promise<boolean> {
  return (await ex.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** The permissions a set of roles grants, in decide()'s shape. */
export async function permissionsOfRoles(ex: Executor, roleIds: string[]): Promise<{ endpoints: EndpointPermission[]; entities: EntityPermission[] }> {
  const [endpoints, entities] = [await permissionsOf(ex, 'endpoints', roleIds), await permissionsOf(ex, 'entities', roleIds)];
  return {
    endpoints: endpoints.map((e) => ({ workspace: e.workspace, endpoint: e.endpoint, actions: e.actions, negative: e.negative })),
    entities: entities.map((e) => ({ entity_id: e.entity_id, entity_type: e.entity_type, actions: e.actions, negative: e.negative })),
  };
}
