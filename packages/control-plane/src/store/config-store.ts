import { sql } from 'kysely';
import type { EntityDefinition } from '@gatehouse/core';
import type { Database } from '../db/open-database';
import { SqlErrorMapper } from '../db/sql-errors';
import { EntityRepository, type Executor } from './entity-repository';
import { MARK_BUMPED } from '../publisher/change-capture';

export interface ConfigStoreOptions {
  /**
   * Called after each committed admin write with the new config version, or null where change capture bumped it at
   * commit (not read back) (awaited; errors are logged, the write stays committed). Concurrent writes may report
   * versions out of order: read the latest state, not a delta.
   */
  onCommitted?: (version: number | null) => void | Promise<void>;
  log?: (message: string, err?: unknown) => void;
}

export interface WriteOptions<T> {
  /** runs after `work`, in its transaction, with its result; a failure rolls the whole write back */
  inTransaction?: (trx: Executor, result: T) => Promise<void>;
  /**
   * false for a write of entities that are no part of the configuration (RBAC's families): it bumps no config
   * version and reports nothing; default true
   */
  versioned?: boolean;
}

/**
 * The write side of the configuration: one repository per stored entity and `write()`, which runs one admin write
 * as one transaction that also bumps the config version, then reports the version once committed.
 */
export class ConfigStore {
  readonly errors: SqlErrorMapper;
  private readonly repos = new Map<string, EntityRepository>();
  /** change capture is installed: a transaction that changed configuration rows bumps the version as it commits */
  private bumpedByCapture = false;

  constructor(
    readonly database: Database,
    private readonly options: ConfigStoreOptions = {},
  ) {
    this.errors = new SqlErrorMapper(database.entities);
    for (const def of database.entities) this.repos.set(def.name, new EntityRepository(def, this.errors));
  }

  get db(): Executor {
    return this.database.db;
  }

  /** a repository for an entity whose table exists (declared when the database was opened, or added by migration) */
  repo(name: string): EntityRepository {
    const repo = this.repos.get(name);
    if (!repo) throw new Error(`no table for entity '${name}'`);
    return repo;
  }

  /** adds an entity whose table is created by a migration of its own */
  register(def: EntityDefinition): EntityRepository {
    const existing = this.repos.get(def.name);
    if (existing) return existing;
    this.errors.add(def);
    const repo = new EntityRepository(def, this.errors);
    this.repos.set(def.name, repo);
    return repo;
  }

  /**
   * From now on writes leave the version bump to change capture's commit trigger (installed by the publisher): one
   * statement less per write, and the lock that orders versions is taken only while committing.
   */
  bumpOnCommit(): void {
    this.bumpedByCapture = true;
  }

  entityNames(): string[] {
    return [...this.repos.keys()];
  }

  /**
   * Runs `work` in one transaction, then `options.inTransaction` (records that must commit with what `work` wrote,
   * or not at all: ownership grants, workspace records), bumps the config version in it, then calls onCommitted.
   */
  async write<T>(work: (trx: Executor) => Promise<T>, options: WriteOptions<T> = {}): Promise<T> {
    let version: number | null = null;
    const result = await this.db.transaction().execute(async (trx) => {
      const out = await work(trx);
      await options.inTransaction?.(trx, out);
      if (options.versioned !== false && !this.bumpedByCapture) version = await bumpVersion(trx);
      return out;
    });
    if (this.options.onCommitted && options.versioned !== false) {
      try {
        await this.options.onCommitted(version);
      } catch (err) {
        (this.options.log ?? defaultLog)(`after-commit hook failed for config version ${version}`, err);
      }
    }
    return result;
  }

  /**
   * Runs `work` in one repeatable-read transaction together with reading the config version, so what it reads is
   * exactly the state of that version (snapshot building).
   */
  async readConsistent<T>(work: (trx: Executor) => Promise<T>): Promise<{ version: number; result: T }> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const version = await readVersion(trx);
        return { version, result: await work(trx) };
      });
  }

  async version(ex: Executor = this.db): Promise<number> {
    return readVersion(ex);
  }
}

function defaultLog(message: string, err?: unknown): void {
  console.error(`[gatehouse] ${message}`, err ?? '');
}

/**
 * Row-locks the single config_state row until commit, so versions follow commit order across replicas; change
 * capture's commit trigger then leaves this transaction alone.
 */
export async function bumpVersion(trx: Executor): Promise<number> {
  const { rows } = await sql<{ version: string | number }>`
    with bumped as (
      update config_state set version = version + 1, updated_at = extract(epoch from now())::bigint where id = 1 returning version
    )
    select version, ${MARK_BUMPED} from bumped`.execute(trx);
  return Number(rows[0]!.version);
}

export async function readVersion(ex: Executor): Promise<number> {
  const { rows } = await sql<{ version: string | number }>`select version from config_state where id = 1`.execute(ex);
  return Number(rows[0]?.version ?? 0);
}
