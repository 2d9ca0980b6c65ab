import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@gatehouse/testkit';
import { openDatabase, type Database, type DatabaseConfig } from '../src/db';

/** One throwaway database per backend; tests run the same cases on both. */
export interface Backend {
  name: 'pglite' | 'postgres';
  open(config?: Omit<DatabaseConfig, 'url' | 'dataDir'>): Promise<{ database: Database; cleanup(): Promise<void> }>;
}

export const pgliteBackend: Backend = {
  name: 'pglite',
  async open(config = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pglite-'));
    const database = await openDatabase({ ...config, dataDir: dir });
    return {
      database,
      async cleanup() {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export const postgresBackend: Backend = {
  name: 'postgres',
  async open(config = {}) {
    const testDb = await createTestDatabase();
    const database = await openDatabase({ ...config, url: testDb.url, poolSize: 4 });
    return {
      database,
      async cleanup() {
        await database.close();
        await testDb.drop();
      },
    };
  },
};

export const BACKENDS: Backend[] = [pgliteBackend, postgresBackend];
