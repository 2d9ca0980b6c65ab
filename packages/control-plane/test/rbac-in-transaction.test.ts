/**
 * What RBAC writes beside an entity commits with it or not at all (issue 16): the creator's ownership grant and the
 * workspace record run in the create's transaction (RbacService.recordCreation through EntityService.onCreated),
 * so a failure there leaves no entity behind and no config version spent. Workspace names an admin path takes are
 * reserved, whatever module registered the path.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql } from 'kysely';
import request from 'supertest';
import { createAdminApp, type AdminApp } from '../src/http';
import { createRbac, rbacMigrations } from '../src/rbac';
import { ConfigStore } from '../src/store';
import { EntityService, registerDefaultKinds } from '../src/service';
import { bundledPlugins } from '@gatehouse/plugins';
import type { Database } from '../src/db';
import { BACKENDS } from './backends';

jest.setTimeout(60_000);

const BOOT = 'boot-token-in-transaction';

describe.each(BACKENDS)('in-transaction records on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  let app: AdminApp;
  const committed: Array<number | null> = [];
  const as = () => ({
    get: (path: string) => request(app).get(path).set('Kong-Admin-Token', BOOT),
    post: (path: string, body: Record<string, unknown>) => request(app).post(path).set('Kong-Admin-Token', BOOT).send(body),
  });
  const version = async () => Number((await sql<{ version: string }>`select version from config_state`.execute(database.db)).rows[0]!.version);
  const grantsOf = async (entityId: string) =>
    Number((await sql<{ n: string }>`select count(*) as n from rbac_role_entities where entity_id = ${entityId}`.execute(database.db)).rows[0]!.n);

  beforeAll(async () => {
    const opened = await backend.open({ migrations: rbacMigrations() });
    database = opened.database;
    cleanup = opened.cleanup;
    const rbac = createRbac({ db: database.db, mode: 'entity', adminToken: BOOT, log: () => {} });
    await rbac.bootstrap();
    const gizmos = (ctx: Parameters<typeof rbac.extension>[0]) => ctx.resources.add('/gizmos', { get: (_req, res) => void res.json({ data: [] }) });
    app = createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension, gizmos], onCommitted: (v) => void committed.push(v), log: () => {} });
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it('a create grants its creator every action on the entity, in the same transaction', async () => {
    const made = await as().post('/consumers', { username: 'granted' });
    expect(made.status).toBe(201);
    expect(await grantsOf(made.body.id)).toBe(1);
  });

  it('a grant the database refuses rolls the entity back: no consumer, no config version', async () => {
    await sql`alter table rbac_role_entities add constraint refuse_consumer_grants check (entity_type <> 'consumers') not valid`.execute(database.db);
    try {
      const before = await version();
      const seen = committed.length;
      const refused = await as().post('/consumers', { username: 'half-written' });
      expect(refused.status).toBe(500);
      expect((await as().get('/consumers/half-written')).status).toBe(404);
      expect(await version()).toBe(before);
      expect(committed.length).toBe(seen);
    } finally {
      await sql`alter table rbac_role_entities drop constraint refuse_consumer_grants`.execute(database.db);
    }
    expect((await as().post('/consumers', { username: 'half-written' })).status).toBe(201);
  });

  it('a workspace record the database refuses rolls the entity back', async () => {
    expect((await as().post('/workspaces', { name: 'team-t' })).status).toBe(201);
    await sql`alter table workspace_entities add constraint refuse_service_records check (entity_type <> 'services') not valid`.execute(database.db);
    try {
      expect((await as().post('/team-t/services', { name: 'in-team', host: 'example.test' })).status).toBe(500);
      expect((await as().get('/services/in-team')).status).toBe(404);
    } finally {
      await sql`alter table workspace_entities drop constraint refuse_service_records`.execute(database.db);
    }
    const made = await as().post('/team-t/services', { name: 'in-team', host: 'example.test' });
    expect(made.status).toBe(201);
    const rows = await sql<{ ws: string }>`select ws_id::text as ws from workspace_entities where entity_id = ${made.body.id}`.execute(database.db);
    expect(rows.rows).toHaveLength(1);
  });

  it('a workspace PATCH merges config and meta key by key; a PUT replaces them', async () => {
    const patch = (path: string, body: Record<string, unknown>) => request(app).patch(path).set('Kong-Admin-Token', BOOT).send(body);
    const put = (path: string, body: Record<string, unknown>) => request(app).put(path).set('Kong-Admin-Token', BOOT).send(body);
    expect((await as().post('/workspaces', { name: 'team-m', meta: { color: 'red', owner: 'ops' } })).status).toBe(201);
    const patched = await patch('/workspaces/team-m', { meta: { color: 'blue' } });
    expect(patched.body.meta).toEqual({ color: 'blue', owner: 'ops' });
    const replaced = await put('/workspaces/team-m', { meta: { color: 'green' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.meta).toEqual({ color: 'green' });
    expect(replaced.body.config).toEqual({});
  });

  it('workspace names are reserved by the registered admin paths, not by a list', async () => {
    // `/gizmos` is registered by an extension: its name is an admin collection, so no workspace may take it
    const taken = await as().post('/workspaces', { name: 'gizmos' });
    expect(taken.status).toBe(400);
    expect(taken.body.fields).toEqual({ name: "'gizmos' is a reserved name" });
    expect((await as().post('/workspaces', { name: 'Services' })).status).toBe(400);
    // a name no admin path uses is free, even one a fixed list once held
    expect((await as().post('/workspaces', { name: 'license' })).status).toBe(201);
    // and a registered path is told apart from a workspace prefix: `/team-t/gizmos` is gizmos in team-t
    expect((await as().get('/team-t/gizmos')).status).toBe(200);
    expect((await as().get('/nowhere/gizmos')).body).toEqual({ message: "Workspace 'nowhere' not found" });
  });
});

describe.each(BACKENDS)('creation hooks on $name', (backend) => {
  it('a hook that throws rolls the create back', async () => {
    const { database, cleanup } = await backend.open();
    try {
      const store = new ConfigStore(database);
      const service = new EntityService(store);
      registerDefaultKinds(service, bundledPlugins);
      service.onCreated(async (trx, kind, entity) => {
        // the hook sees the row, in the write's transaction
        expect(await store.repo(kind.def.name).findById(trx, entity.id)).not.toBeNull();
        throw new Error('injected');
      });
      const before = await store.version();
      await expect(service.create(service.kind('consumers'), { body: { username: 'rolled-back' } })).rejects.toThrow('injected');
      expect(await service.find(service.kind('consumers'), 'rolled-back')).toBeNull();
      expect(await store.version()).toBe(before);
    } finally {
      await cleanup();
    }
  });
});
