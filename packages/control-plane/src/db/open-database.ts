import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { EntityDefinition } from '@gatehouse/core';
import { bundledPlugins } from '@gatehouse/plugins';
import { BASE_ENTITIES, coreMigrations, entityTableMigrations, migrateToLatest, type MigrationSet } from './migrations';
import { serialPgliteDialect } from './pglite-dialect';

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
  db: Kysely<any>;
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
  let db: Kysely<any>;
  let kind: Database['kind'];
  if (config.url) {
    kind = 'postgres';
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize ?? 10, connectionTimeoutMillis: 5000 });
    // an idle client losing its server must not crash the process; the next query reports the fault
    pool.on('error', () => {});
    // nor a client in use (between checkout and query) when the server goes away: its query reports the fault
    pool.on('connect', (client) => void client.on('error', () => {}));
    db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  } else {
    kind = 'pglite';
    if (config.dataDir) mkdirSync(config.dataDir, { recursive: true });
    const client = await PGlite.create(config.dataDir ? { dataDir: config.dataDir } : {});
    db = new Kysely<any>({ dialect: serialPgliteDialect(client) });
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
