import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Snapshot } from '@gatehouse/core';
import { compile } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { MemoryBus, verifySnapshot } from '@gatehouse/sync';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testkit';
import { createAdminApp, openDatabase, SnapshotPublisher, type AdminApp, type Database } from '../src';

const SECRET = 'publisher-test-secret-0123456789abcdef';
const silent = { info: () => {}, warn: () => {}, error: () => {} };

describe('SnapshotPublisher (Postgres)', () => {
  let testDb: TestDatabase;
  let database: Database;
  let app: AdminApp;
  let bus: MemoryBus;
  let publisher: SnapshotPublisher;
  let refuse: string | null = null;

  beforeAll(async () => {
    testDb = await createTestDatabase({ prefix: 'gh_publisher' });
    database = await openDatabase({ url: testDb.url });
    bus = new MemoryBus();
    app = createAdminApp({ database, onCommitted: () => publisher.trigger() });
    publisher = new SnapshotPublisher({
      store: app.locals.admin.store,
      bus,
      secret: SECRET,
      plugins: bundledPlugins,
      check: (snapshot: Snapshot) => {
        if (refuse) throw new Error(refuse);
        compile(snapshot);
      },
      log: silent,
      reconcileIntervalMs: 50,
    });
    await publisher.start();
  }, 60_000);

  afterAll(async () => {
    await publisher?.stop();
    await bus?.close();
    await database?.close();
    await testDb?.drop();
  });

  const latest = async () => verifySnapshot((await bus.fetchLatest())!, SECRET);

  it('publishes the committed state, signed, at the version the write produced', async () => {
    await request(app).post('/services').type('form').send({ name: 's1', url: 'http://127.0.0.1:9/' }).expect(201);
    await request(app).post('/services/s1/routes').type('form').send({ 'paths[]': '/s1' }).expect(201);
    await request(app).post('/consumers').type('form').send({ username: 'bob' }).expect(201);
    await request(app).post('/consumers/bob/key-auth').type('form').send({ key: 'bob-key' }).expect(201);
    const snapshot = await latest();
    const status = await request(app).get('/status').expect(200);
    expect(snapshot.version).toBe(status.body.config_version);
    expect(snapshot.config.services.map((s) => s.name)).toEqual(['s1']);
    expect(snapshot.config.routes[0]!.paths).toEqual(['/s1']);
    expect(snapshot.config.credentials.keyauth_credentials!.map((c) => c.key)).toEqual(['bob-key']);
    expect(publisher.status()).toMatchObject({ version: snapshot.version, hash: snapshot.hash, last_error: null });
  });

  it('coalesces concurrent writes and ends on the latest version', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => request(app).post('/consumers').type('form').send({ username: `c${i}` }).expect(201)),
    );
    const snapshot = await latest();
    const { body } = await request(app).get('/status').expect(200);
    expect(snapshot.version).toBe(body.config_version);
    expect(snapshot.config.consumers.length).toBe(9);
  });

  it('does not publish a snapshot that fails the compile check, and keeps the last good one on the bus', async () => {
    const before = await latest();
    refuse = 'would not load';
    try {
      await request(app).post('/consumers').type('form').send({ username: 'refused' }).expect(201);
      const after = await latest();
      expect(after.version).toBe(before.version);
      expect(publisher.status().last_error).toMatch(/would not load/);
    } finally {
      refuse = null;
    }
    await publisher.trigger();
    expect((await latest()).config.consumers.some((c) => c.username === 'refused')).toBe(true);
  });

  it('republishes when the bus lost its snapshot (a Redis restarted empty)', async () => {
    const fresh = new MemoryBus();
    const second = new SnapshotPublisher({
      store: app.locals.admin.store,
      bus: fresh,
      secret: SECRET,
      plugins: bundledPlugins,
      check: (s) => void compile(s),
      log: silent,
      reconcileIntervalMs: 20,
    });
    // never started: only the reconcile loop can fill this bus
    await (second as unknown as { reconcile(): Promise<void> }).reconcile();
    const got = await fresh.fetchLatest();
    expect(got).not.toBeNull();
    expect(verifySnapshot(got!, SECRET).version).toBe((await latest()).version);
    await second.stop();
    await fresh.close();
  });
});
