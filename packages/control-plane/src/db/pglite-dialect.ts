import type { PGlite } from '@electric-sql/pglite';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { KyselyPGlite } from 'kysely-pglite';

/**
 * Two adjustments to kysely-pglite's driver:
 * - PGlite is a single session, and kysely-pglite hands every caller that same session as a fresh "connection", so
 *   two overlapping transactions would interleave their statements. This driver lends the session to one holder at
 *   a time (a transaction keeps it from BEGIN to COMMIT/ROLLBACK), the isolation a pool gives Postgres.
 * - PGlite reports `affectedRows`, Kysely reads `numAffectedRows`; results are translated.
 */
class SerialConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = (await this.inner.executeQuery<R>(compiledQuery)) as QueryResult<R> & { affectedRows?: number };
    if (result.numAffectedRows === undefined && typeof result.affectedRows === 'number') {
      return { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
    }
    return result;
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

class SerialDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    const previous = this.queue;
    this.queue = previous.then(() => turn);
    await previous;
    try {
      const connection = new SerialConnection(await this.inner.acquireConnection());
      this.releases.set(connection, release);
      return connection;
    } catch (err) {
      release();
      throw err;
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction((connection as SerialConnection).inner, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction((connection as SerialConnection).inner);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction((connection as SerialConnection).inner);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection((connection as SerialConnection).inner);
    } finally {
      const release = this.releases.get(connection);
      this.releases.delete(connection);
      release?.();
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * kysely-pglite, given a client that carries a `dataDir`, starts an unawaited mkdir of it (which fails once a
 * temporary directory is gone); the directory already exists here, so the client is handed over without it.
 */
function withoutDataDir(client: PGlite): PGlite {
  return new Proxy(client, {
    get(target, key) {
      if (key === 'dataDir') return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export function serialPgliteDialect(client: PGlite): Dialect {
  const base = new KyselyPGlite(withoutDataDir(client)).dialect;
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new SerialDriver(base.createDriver()),
    createIntrospector: (db) => base.createIntrospector(db),
    createQueryCompiler: () => base.createQueryCompiler(),
  };
}
