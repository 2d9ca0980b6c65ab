import type { ColumnType, Generated, Kysely, RawBuilder } from 'kysely';

/**
 * The database's tables and their row types. Every entity has a generated table (db/entity-tables.ts) of the same
 * shape, `EntityTable`, named after the entity; the other tables are written by hand in migrations and listed in
 * `FixedTables`. `Db` (and a transaction of it) is what every query runs on.
 */

/** An entity as stored: its fields, with the generated id and creation time. */
export type StoredEntity = Record<string, unknown> & { id: string; created_at: number };

/** Postgres `bigint`: written as a number, read back as text by `pg` (numbers by PGlite). */
type BigIntColumn = ColumnType<number | string, number, number>;
/** the `entity` column: the stored entity, written as JSON text or a `::jsonb` expression */
type EntityColumn = ColumnType<StoredEntity, string | RawBuilder<unknown>, string | RawBuilder<unknown>>;
/** a column derived from the entity: a unique field's text, or the id a foreign key references */
type DerivedColumn = ColumnType<string | null, string | null | undefined, string | null>;

/** A generated entity table: the entity in `entity`, columns only for what the database enforces. */
export interface EntityTable {
  id: string;
  created_at: BigIntColumn;
  entity: EntityColumn;
  /** unique fields (`username`, `name`) and foreign ids (`service_id`), per the entity's definition */
  [column: string]: DerivedColumn | EntityColumn | BigIntColumn | string;
}

/** One row: the config version, bumped by every admin write (migration 0001). */
export interface ConfigStateTable {
  id: number;
  version: BigIntColumn;
  updated_at: BigIntColumn;
}

/** One row: the cluster epoch (migration 0004). */
export interface ClusterEpochTable {
  id: number;
  epoch: string;
  updated_at: BigIntColumn;
}

/** Which workspace an entity was created in; entities without a row live in `default` (rbac migration 2000). */
export interface WorkspaceEntitiesTable {
  entity_id: string;
  entity_type: string;
  ws_id: string;
}

export interface RbacUserRolesTable {
  user_id: string;
  role_id: string;
  role_source: Generated<string>;
}

interface RbacPermissionColumns {
  role_id: string;
  actions: number;
  negative: Generated<boolean>;
  comment: string | null;
  created_at: BigIntColumn;
  updated_at: BigIntColumn;
}

/** primary key (role, workspace, endpoint); `workspace` is a workspace name or `*` */
export interface RbacRoleEndpointsTable extends RbacPermissionColumns {
  workspace: string;
  endpoint: string;
}

/** primary key (role, entity_id); `entity_id` is an entity id, a workspace id or `*` */
export interface RbacRoleEntitiesTable extends RbacPermissionColumns {
  entity_id: string;
  entity_type: string;
}

/** The tables migrations write by hand. */
export interface FixedTables {
  config_state: ConfigStateTable;
  cluster_epoch: ClusterEpochTable;
  workspace_entities: WorkspaceEntitiesTable;
  rbac_user_roles: RbacUserRolesTable;
  rbac_role_endpoints: RbacRoleEndpointsTable;
  rbac_role_entities: RbacRoleEntitiesTable;
}

/** Every table: the fixed ones by name, any other name an entity's. */
export type DatabaseTables = FixedTables & Record<string, EntityTable>;

/** The database handle, or an open transaction of it. */
export type Db = Kysely<DatabaseTables>;
