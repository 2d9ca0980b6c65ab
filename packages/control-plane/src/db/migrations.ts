import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { consumers, newEpoch, plugins, routes, services, targets, upstreams, type EntityDefinition } from '@gatehouse/core';
import { apis } from '../legacy/api-entity';
import { createEntityTable } from './entity-tables';

export type MigrationSet = Record<string, Migration>;

/** The entities of core, in dependency order. */
export const CORE_ENTITIES: EntityDefinition[] = [consumers, services, routes, plugins];

/** Upstreams and their targets (targets.upstream_id → upstreams ON DELETE CASCADE, UNIQUE (upstream, target)). */
export const BALANCER_ENTITIES: EntityDefinition[] = [upstreams, targets];

/** Every entity the control plane itself stores: core's and the legacy /apis rows. */
export const BASE_ENTITIES: EntityDefinition[] = [...CORE_ENTITIES, apis];

function byName(defs: EntityDefinition[]): Map<string, EntityDefinition> {
  return new Map(defs.map((d) => [d.name, d]));
}

/** Schema of the core: the config version row and one table per core entity. */
export function coreMigrations(): MigrationSet {
  return {
    '0001_config_state': {
      async up(db) {
        await db.schema
          .createTable('config_state')
          .addColumn('id', 'integer', (c) => c.primaryKey())
          .addColumn('version', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into config_state (id, version, updated_at) values (1, 0, extract(epoch from now())::bigint)`.execute(db);
      },
    },
    '0002_core_entities': {
      async up(db) {
        const known = byName(CORE_ENTITIES);
        for (const def of CORE_ENTITIES) await createEntityTable(db, def, known);
      },
    },
    '0003_legacy_apis': {
      up: (db) => createEntityTable(db, apis, byName(BASE_ENTITIES)),
    },
    // the cluster epoch (decision 19): a new database, a reset one included, starts a new epoch
    '0004_cluster_epoch': {
      async up(db) {
        await db.schema
          .createTable('cluster_epoch')
          .addColumn('id', 'integer', (c) => c.primaryKey())
          .addColumn('epoch', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into cluster_epoch (id, epoch, updated_at) values (1, ${newEpoch()}, extract(epoch from now())::bigint)`.execute(db);
      },
    },
    '0005_upstreams_and_targets': {
      async up(db) {
        const known = byName(BALANCER_ENTITIES);
        for (const def of BALANCER_ENTITIES) await createEntityTable(db, def, known);
      },
    },
  };
}

/**
 * One migration per extra entity (plugin credentials, keys, …), generated from its definition, so adding an entity
 * needs no hand-written migration. Named after the entity: an entity added later runs once, on the next start.
 * Changing an existing definition's storage (new unique, new foreign key) needs a hand-written migration.
 */
export function entityTableMigrations(extra: EntityDefinition[]): MigrationSet {
  const known = byName([...BASE_ENTITIES, ...extra]);
  const out: MigrationSet = {};
  for (const def of extra) {
    out[`1000_entity_${def.name}`] = { up: (db) => createEntityTable(db, def, known) };
  }
  return out;
}

/** Brings the schema up to date; several control planes may call it at once (Kysely takes an advisory lock). */
export async function migrateToLatest<DB>(db: Kysely<DB>, migrations: MigrationSet): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
}
