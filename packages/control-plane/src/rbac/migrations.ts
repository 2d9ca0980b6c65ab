import { randomUUID } from 'node:crypto';
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration, type RawBuilder } from 'kysely';
import type { RbacRoleEndpointsTable, RbacRoleEntitiesTable } from '../db/tables';
import { BUILTIN_ROLES, DEFAULT_WORKSPACE } from './decide';

/**
 * Tables of workspaces and RBAC, with the `default` workspace and the three built-in roles seeded on first start.
 * - rbac_role_endpoints: primary key (role, workspace, endpoint); `workspace` is a workspace name or `*`.
 * - rbac_role_entities: primary key (role, entity_id); `entity_id` is an entity id, a workspace id or `*`.
 * - workspace_entities: which workspace an entity was created in (entities without a row live in `default`).
 * - admins: admin accounts; the RBAC user of an admin is hidden from /rbac/users and listed by /admins.
 */
export function rbacMigrations(): Record<string, Migration> {
  return {
    '2000_workspaces_and_rbac': { up: createRbacTables },
    '2001_rbac_entities_on_the_entity_framework': { up: moveToEntityLayout },
  };
}

const ts = (c: ColumnDefinitionBuilder) => c.notNull();

async function createRbacTables(db: Kysely<unknown>): Promise<void> {
  await createWorkspaceTables(db);
  await createUserAndRoleTables(db);
  await createPermissionTables(db);
  await createAdminTable(db);
  await seedDefaults(db);
}

/** Migration 2000: workspaces, and which workspace an entity lives in. */
async function createWorkspaceTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('meta', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addUniqueConstraint('uq_workspaces_name', ['name'])
    .execute();

  await db.schema
    .createTable('workspace_entities')
    .addColumn('entity_id', 'uuid', (c) => c.primaryKey())
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('ws_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('restrict'))
    .execute();
  await db.schema.createIndex('ix_workspace_entities_ws').on('workspace_entities').column('ws_id').execute();
}

/** Migration 2000: users, roles and which user holds which role. */
async function createUserAndRoleTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rbac_users')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('user_token', 'text', (c) => c.notNull())
    .addColumn('user_token_ident', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addUniqueConstraint('uq_rbac_users_name', ['name'])
    .execute();
  await db.schema.createIndex('ix_rbac_users_ident').on('rbac_users').column('user_token_ident').execute();

  await db.schema
    .createTable('rbac_roles')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('ws_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('restrict'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addUniqueConstraint('uq_rbac_roles_ws_name', ['ws_id', 'name'])
    .execute();

  await db.schema
    .createTable('rbac_user_roles')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('rbac_users.id').onDelete('cascade'))
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('rbac_roles.id').onDelete('cascade'))
    .addColumn('role_source', 'text', (c) => c.notNull().defaultTo('local'))
    .addPrimaryKeyConstraint('pk_rbac_user_roles', ['user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('ix_rbac_user_roles_role').on('rbac_user_roles').column('role_id').execute();
}

/** Migration 2000: the endpoint and entity permissions of roles. */
async function createPermissionTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rbac_role_endpoints')
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('rbac_roles.id').onDelete('cascade'))
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('actions', 'integer', (c) => c.notNull())
    .addColumn('negative', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('comment', 'text')
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addPrimaryKeyConstraint('pk_rbac_role_endpoints', ['role_id', 'workspace', 'endpoint'])
    .execute();

  await db.schema
    .createTable('rbac_role_entities')
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('rbac_roles.id').onDelete('cascade'))
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('actions', 'integer', (c) => c.notNull())
    .addColumn('negative', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('comment', 'text')
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addPrimaryKeyConstraint('pk_rbac_role_entities', ['role_id', 'entity_id'])
    .execute();
  await db.schema.createIndex('ix_rbac_role_entities_entity').on('rbac_role_entities').column('entity_id').execute();
}

/** Migration 2000: admins. */
async function createAdminTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('admins')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('custom_id', 'text')
    .addColumn('email', 'text')
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rbac_token_enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('rbac_user_id', 'uuid', (c) => c.notNull().references('rbac_users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', ts)
    .addColumn('updated_at', 'bigint', ts)
    .addUniqueConstraint('uq_admins_username', ['username'])
    .addUniqueConstraint('uq_admins_custom_id', ['custom_id'])
    .addUniqueConstraint('uq_admins_email', ['email'])
    .addUniqueConstraint('uq_admins_rbac_user', ['rbac_user_id'])
    .execute();
}

// workspaces, users, roles and admins take the layout of every entity table (rbac/kinds.ts): the entity in
// `entity` (jsonb), columns only for what the database enforces; constraints renamed to the generated names
async function moveToEntityLayout(db: Kysely<unknown>): Promise<void> {
  const steps = [
    sql`alter table workspaces add column entity jsonb`,
    sql`update workspaces set entity = jsonb_build_object('id', id, 'created_at', created_at, 'updated_at', updated_at,
      'name', name, 'comment', comment, 'config', config, 'meta', meta)`,
    sql`alter table workspaces drop column comment, drop column config, drop column meta, drop column updated_at`,

    sql`alter table rbac_users add column entity jsonb`,
    sql`update rbac_users set entity = jsonb_build_object('id', id, 'created_at', created_at, 'updated_at', updated_at,
      'name', name, 'user_token', user_token, 'user_token_ident', user_token_ident, 'comment', comment, 'enabled', enabled)`,
    sql`drop index ix_rbac_users_ident`,
    sql`alter table rbac_users drop column user_token, drop column user_token_ident, drop column comment,
      drop column enabled, drop column updated_at`,
    sql`create index ix_rbac_users_ident on rbac_users ((entity ->> 'user_token_ident'))`,

    sql`alter table rbac_roles add column entity jsonb`,
    sql`update rbac_roles set entity = jsonb_build_object('id', id, 'created_at', created_at, 'updated_at', updated_at,
      'workspace', jsonb_build_object('id', ws_id), 'name', name, 'comment', comment, 'is_default', is_default)`,
    sql`alter table rbac_roles drop column comment, drop column is_default, drop column updated_at`,
    sql`alter table rbac_roles rename column ws_id to workspace_id`,
    sql`alter table rbac_roles rename constraint rbac_roles_ws_id_fkey to fk_rbac_roles_workspace`,
    sql`alter table rbac_roles rename constraint uq_rbac_roles_ws_name to uq_rbac_roles_workspace_name`,
    sql`create index ix_rbac_roles_workspace on rbac_roles (workspace_id)`,

    sql`alter table admins add column entity jsonb`,
    sql`update admins set entity = jsonb_build_object('id', id, 'created_at', created_at, 'updated_at', updated_at,
      'username', username, 'custom_id', custom_id, 'email', email, 'rbac_token_enabled', rbac_token_enabled,
      'status', status, 'rbac_user', jsonb_build_object('id', rbac_user_id))`,
    sql`alter table admins drop column status, drop column rbac_token_enabled, drop column updated_at`,
    sql`alter table admins rename constraint admins_rbac_user_id_fkey to fk_admins_rbac_user`,
  ];
  for (const step of steps) await step.execute(db);
  for (const table of ['workspaces', 'rbac_users', 'rbac_roles', 'admins']) {
    await sql`alter table ${sql.table(table)} alter column entity set not null`.execute(db);
    await sql`create index ${sql.id(`ix_${table}_tags`)} on ${sql.table(table)} using gin ((entity -> 'tags'))`.execute(db);
  }
}

/** The `default` workspace and the built-in roles with their permissions. */
/** The tables seeded, as migration 2000 made them (2001 moves them to the entity layout). */
type SeededTables = {
  workspaces: { id: string; name: string; comment: string | null; config: RawBuilder<unknown>; meta: RawBuilder<unknown>; created_at: number; updated_at: number };
  rbac_roles: { id: string; ws_id: string; name: string; comment: string | null; is_default: boolean; created_at: number; updated_at: number };
  rbac_role_endpoints: Omit<RbacRoleEndpointsTable, 'negative'> & { negative: boolean };
  rbac_role_entities: Omit<RbacRoleEntitiesTable, 'negative'> & { negative: boolean };
};

async function seedDefaults(schemaOnly: Kysely<unknown>): Promise<void> {
  const db = schemaOnly.withTables<SeededTables>();
  const now = Math.floor(Date.now() / 1000);
  const wsId = randomUUID();
  await db
    .insertInto('workspaces')
    .values({ id: wsId, name: DEFAULT_WORKSPACE, comment: null, config: sql`'{}'::jsonb`, meta: sql`'{}'::jsonb`, created_at: now, updated_at: now })
    .execute();
  for (const role of BUILTIN_ROLES) {
    const roleId = randomUUID();
    await db
      .insertInto('rbac_roles')
      .values({ id: roleId, ws_id: wsId, name: role.name, comment: role.comment, is_default: false, created_at: now, updated_at: now })
      .execute();
    for (const p of role.endpoints) {
      await db
        .insertInto('rbac_role_endpoints')
        .values({ role_id: roleId, workspace: p.workspace, endpoint: p.endpoint, actions: p.actions, negative: p.negative, comment: null, created_at: now, updated_at: now })
        .execute();
    }
    for (const p of role.entities) {
      await db
        .insertInto('rbac_role_entities')
        .values({
          role_id: roleId,
          entity_id: p.entity_id,
          entity_type: p.entity_type ?? 'wildcard',
          actions: p.actions,
          negative: p.negative,
          comment: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  }
}
