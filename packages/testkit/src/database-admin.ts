import pg from 'pg';

const DEFAULT_ADMIN_URL = process.env.GATEHOUSE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Runs statements one after the other on the server's maintenance database (by default the shared test server's
 * `postgres`): for tests that reset, copy or restore a database of their own (`DROP DATABASE … WITH (FORCE)`,
 * `CREATE DATABASE … TEMPLATE …`).
 */
export async function runAdminSql(statements: string[], adminUrl = DEFAULT_ADMIN_URL): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end().catch(() => {});
  }
}
