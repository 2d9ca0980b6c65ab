import { describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '../src/database';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

describe('createTestDatabase', () => {
  it('creates a uniquely named database that can be used and then dropped', async () => {
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    try {
      expect(a.name).not.toBe(b.name);
      const client = new pg.Client({ connectionString: a.url });
      await client.connect();
      const { rows } = await client.query('select current_database() as name');
      expect(rows[0].name).toBe(a.name);
      await client.end();
    } finally {
      await a.drop();
      await b.drop();
    }
    const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    const { rows } = await admin.query('select count(*)::int as n from pg_database where datname = any($1)', [[a.name, b.name]]);
    await admin.end();
    expect(rows[0].n).toBe(0);
  });

  it('fails (never skips) when Postgres is unreachable', async () => {
    await expect(createTestDatabase({ adminUrl: 'postgres://postgres@127.0.0.1:1/postgres' })).rejects.toThrow(/Postgres is required at 127\.0\.0\.1:1/);
  });
});
