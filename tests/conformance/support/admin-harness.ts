import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createAdminApp, openDatabase, type AdminApp, type AdminAppDeps, type Database, type MigrationSet } from '@gatehouse/control-plane';
import { createTestDatabase } from '@gatehouse/testkit';

export type BackendName = 'postgres' | 'pglite';

export interface AdminHarness {
  app: AdminApp;
  database: Database;
  /** config versions reported after each committed write */
  committed: Array<number | null>;
  http(): ReturnType<typeof request>;
  close(): Promise<void>;
}

/** The admin API over a throwaway database (its own Postgres database, or PGlite in a temporary directory). */
export async function startAdmin(backend: BackendName = 'postgres', deps: Partial<AdminAppDeps> = {}, migrations?: MigrationSet): Promise<AdminHarness> {
  let database: Database;
  let dispose: () => Promise<void>;
  if (backend === 'postgres') {
    const testDb = await createTestDatabase('gh_conf');
    database = await openDatabase({ url: testDb.url, poolSize: 4, migrations }).catch(async (err) => {
      await testDb.drop();
      throw err;
    });
    dispose = () => testDb.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-conformance-'));
    database = await openDatabase({ dataDir: dir, migrations });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  }
  const committed: Array<number | null> = [];
  const app = createAdminApp({
    database,
    onCommitted: (version) => void committed.push(version),
    ...deps,
  });
  return {
    app,
    database,
    committed,
    http: () => request(app),
    async close() {
      await database.close();
      await dispose();
    },
  };
}
