import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createAdminApp, createRbac, openDatabase, rbacMigrations, type AdminApp, type AdminContext, type Database, type EnforceMode, type Rbac } from '@gatehouse/control-plane';
import { createTestDatabase } from '@gatehouse/testkit';

export interface RbacHarness {
  app: AdminApp;
  database: Database;
  rbac: Rbac;
  /** every message the admin app and RBAC logged */
  logged: string[];
  http(): ReturnType<typeof request>;
  close(): Promise<void>;
}

/** The admin API with RBAC, over its own throwaway database (Postgres by default, or PGlite in a temporary directory). */
export async function startRbacAdmin(options: {
  mode: EnforceMode;
  adminToken?: string;
  backend?: 'postgres' | 'pglite';
  /** more admin routes, mounted after RBAC's */
  extensions?: Array<(ctx: AdminContext) => void>;
}): Promise<RbacHarness> {
  let database: Database;
  let dispose: () => Promise<void>;
  if (options.backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-rbac-'));
    database = await openDatabase({ dataDir: dir, migrations: rbacMigrations() });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const testDb = await createTestDatabase('gh_rbac');
    try {
      database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: rbacMigrations() });
    } catch (err) {
      await testDb.drop();
      throw err;
    }
    dispose = () => testDb.drop();
  }
  const logged: string[] = [];
  const log = (message: string, err?: unknown) => {
    logged.push(`${message} ${err instanceof Error ? `${err.message} ${err.stack}` : JSON.stringify(err ?? '')}`);
  };
  const rbac = createRbac({ db: database.db, mode: options.mode, adminToken: options.adminToken, log });
  await rbac.bootstrap();
  const app = createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension, ...(options.extensions ?? [])], log });
  return {
    app,
    database,
    rbac,
    logged,
    http: () => request(app),
    async close() {
      await database.close();
      await dispose();
    },
  };
}
