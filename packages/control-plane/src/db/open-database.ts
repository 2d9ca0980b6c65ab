import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { EntityDefinition } from '@gatehouse/core';
import { bundledPlugins } from '@gatehouse/plugins';
import { BASE_ENTITIES, coreMigrations, entityTableMigrations, migrateToLatest, type MigrationSet } from './migrations';
import { serialPgliteDialect } from './pglite-dialect';
import type { DatabaseTables, Db } from './tables';

export interface DatabaseConfig {
  /** a Postgres connection string; when absent the embedded database (PGlite) is used */
  url?: string;
  /** where the embedded database keeps its files; absent = in memory (tests) */
  dataDir?: string;
  /** entities stored besides core's (plugin credentials by default); each gets a generated table */
  entities?: EntityDefinition[];
  /** hand-written migrations added to the generated ones */
  migrations?: MigrationSet;
  /** Postgres pool size */
  poolSize?: number;
}

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** every stored entity with its own table (core's and the extra ones) */
  entities: EntityDefinition[];
  /** true when a trivial query succeeds */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Credential entities of every bundled plugin. */
export function bundledCredentialEntities(): EntityDefinition[] {
  return bundledPlugins.flatMap((p) => p.entities ?? []);
}

/** Opens Postgres (url) or the embedded database (dataDir) and runs the migrations before returning. */
export async function openDatabase(config: DatabaseConfig = {}): Promise<Database> {
  const extra = config.entities ?? bundledCredentialEntities();
  let db: Db;
  let kind: Database['kind'];
  if (config.url) {
    kind = 'postgres';
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize ?? 10, connectionTimeoutMillis: 5000 });
    // A client losing its server must never crash the process: pg-pool listens on idle clients only (and forwards to
    // the pool's 'error'), so every client also gets a listener of its own for the time it is checked out. The query
    // in flight fails with the cause, and the admin API turns it into a 503.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      client.on('error', () => {});
    });
    db = new Kysely<DatabaseTables>({ dialect: new PostgresDialect({ pool }) });
  } else {
    kind = 'pglite';
    if (config.dataDir) mkdirSync(config.dataDir, { recursive: true });
    const client = await PGlite.create(config.dataDir ? { dataDir: config.dataDir } : {});
    db = new Kysely<DatabaseTables>({ dialect: serialPgliteDialect(client) });
  }
  try {
    await migrateToLatest(db, { ...coreMigrations(), ...entityTableMigrations(extra), ...(config.migrations ?? {}) });
  } catch (err) {
    await db.destroy().catch(() => {});
    throw err;
  }
  return {
    db,
    kind,
    entities: [...BASE_ENTITIES, ...extra],
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}
