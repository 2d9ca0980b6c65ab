import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  /** connection string of the new database */
  url: string;
  name: string;
  /** drops the database (closing whatever is still connected to it) */
  drop(): Promise<void>;
}

const DEFAULT_ADMIN_URL = process.env.GATEHOUSE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabaseOptions {
  /** name prefix, to tell which tests left a database behind */
  prefix?: string;
  /** a database on the server to connect to while creating and dropping; default postgres on 127.0.0.1:5432 */
  adminUrl?: string;
}

function hostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.username ? ` (user ${parsed.username})` : ''}`;
  } catch {
    return 'the configured server';
  }
}

async function withAdminClient<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new Error(`Postgres is required at ${hostOf(adminUrl)} but is unreachable: ${(error as Error).message}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A uniquely named, empty Postgres database for one test file. Throws when Postgres is unreachable: tests that
 * need it fail rather than skip.
 */
export async function createTestDatabase(options: TestDatabaseOptions | string = {}): Promise<TestDatabase> {
  const { prefix = 'gh_test', adminUrl = DEFAULT_ADMIN_URL } = typeof options === 'string' ? { prefix: options } : options;
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
