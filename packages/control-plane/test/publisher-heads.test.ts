// Decision 19 on the control plane's side: whatever head the bus holds (unsigned, signed with another secret, ahead of
// the database in its own epoch, of a later epoch), publication goes on, and `status()` (GET /status) says why.
// Real Postgres, real Redis (a prefix of its own); heads are forged with a raw Redis connection.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Redis } from 'ioredis';
import { compareEpochs, emptyConfig, newEpoch, type Snapshot, type SnapshotDelta } from '@gatehouse/core';
import { applyDelta, compile, type CompiledConfig } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { RedisBus, redisBusKeys, signSnapshot, verifySnapshot } from '@gatehouse/sync';
import { createTestDatabase, deleteRedisPrefix, requireRedis, SHARED_REDIS_URL, uniqueRedisPrefix, type TestDatabase } from '@gatehouse/testkit';
import { createAdminApp, openDatabase, readEpoch, SnapshotPublisher, type AdminApp, type Database } from '../src';

const SECRET = 'publisher-heads-test-secret-32-bytes-long';
const silent = { info: () => {}, warn: () => {}, error: () => {} };

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// the same heads, with every write published as a full snapshot and with writes published as deltas
describe.each(['full snapshots', 'deltas'])('SnapshotPublisher against forged, foreign and ahead-of-database heads (Postgres, Redis, %s)', (mode) => {
  let testDb: TestDatabase;
  let database: Database;
  let app: AdminApp;
  let bus: RedisBus;
  let raw: Redis;
  let publisher: SnapshotPublisher;
  const prefix = uniqueRedisPrefix('publisher-heads');
  const keys = redisBusKeys(prefix);

  beforeAll(async () => {
    await requireRedis(SHARED_REDIS_URL);
    testDb = await createTestDatabase({ prefix: 'gh_pub_heads' });
    database = await openDatabase({ url: testDb.url });
    bus = new RedisBus({ url: SHARED_REDIS_URL, prefix });
    raw = new Redis(SHARED_REDIS_URL);
    app = createAdminApp({ database, onCommitted: () => publisher.trigger(), statusExtras: () => ({ publisher: publisher.status() }) });
    publisher = new SnapshotPublisher({
      store: app.locals.admin.store,
      bus,
      secret: SECRET,
      plugins: bundledPlugins,
      check: (snapshot: Snapshot) => void compile(snapshot),
      ...(mode === 'deltas' ? { loader: compiledCopy() } : {}),
      log: silent,
      reconcileIntervalMs: 100,
    });
    await publisher.start();
  }, 60_000);

  afterAll(async () => {
    await publisher?.stop();
    await bus?.close();
    raw?.disconnect();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    await database?.close();
    await testDb?.drop();
  });

  const stored = async () => verifySnapshot((await bus.fetchLatest())!, SECRET);
  const dbVersion = async () => app.locals.admin.store.version();
  const dbEpoch = async () => (await readEpoch(database.db))!;
  const events = async (kind: string) => {
    const { body } = await request(app).get('/status').expect(200);
    return (body.publisher.events as Array<{ kind: string; message: string }>).filter((e) => e.kind === kind);
  };
  /** writes a head and snapshot straight into Redis, as anyone with access to it could */
  const forge = async (snapshot: { version: number; hash: string; epoch?: string; payload: string; signature: string }) => {
    await raw.set(keys.snapshot, JSON.stringify(snapshot));
    await raw.set(keys.head, JSON.stringify({ version: snapshot.version, hash: snapshot.hash, epoch: snapshot.epoch }));
  };
  const fakeSnapshot = (version: number, epoch: string | undefined, secret: string) => {
    const base = { format: 1 as const, version, created_at: 0, hash: 'f'.repeat(32), hashes: {} as Snapshot['hashes'], config: emptyConfig() };
    return signSnapshot(epoch ? { ...base, epoch } : base, secret);
  };

  it('publishes with the database\'s epoch', async () => {
    await request(app).post('/services').type('form').send({ name: 'first', url: 'http://127.0.0.1:9/' }).expect(201);
    const head = (await bus.latestAnnouncement())!;
    expect(head.epoch).toBe(await dbEpoch());
    expect(head.version).toBe(await dbVersion());
    // with deltas, the full snapshot for joining data planes is stored once writes pause
    const snapshot = await stored();
    expect(snapshot.epoch).toBe(await dbEpoch());
    if (mode === 'full snapshots') expect(snapshot.version).toBe(await dbVersion());
  });

  it('overwrites a head signed with another secret, ahead in version, on the next write', async () => {
    const epoch = await dbEpoch();
    await forge(fakeSnapshot((await dbVersion()) + 1000, epoch, 'another-cluster-secret-of-32-bytes!!'));
    await request(app).post('/services').type('form').send({ name: 'after-forgery', url: 'http://127.0.0.1:9/' }).expect(201);
    await waitFor('a verifiable head again', async () => {
      try {
        return (await stored()).config.services.some((s) => s.name === 'after-forgery');
      } catch {
        return false;
      }
    });
    expect((await stored()).version).toBe(await dbVersion());
    const found = await events('forged_head');
    expect(found.length).toBeGreaterThanOrEqual(1);
    expect(found.at(-1)!.message).toMatch(/signature does not match/);
  });

  it('overwrites an unsigned head without any write (reconcile loop)', async () => {
    const before = (await events('forged_head')).length;
    const unsigned = { ...fakeSnapshot((await dbVersion()) + 5, await dbEpoch(), SECRET), signature: '' };
    await forge(unsigned);
    await waitFor('the reconcile loop to restore a signed head', async () => {
      try {
        return (await stored()).version === (await dbVersion());
      } catch {
        return false;
      }
    });
    const found = await events('forged_head');
    expect(found.length).toBe(before + 1);
    expect(found.at(-1)!.message).toMatch(/unsigned/);
  });

  it('starts a new epoch when a genuine head of its own epoch is ahead of the database (a restored database)', async () => {
    const epoch = await dbEpoch();
    const current = await stored();
    // what Redis would hold if the database had been at a later version before a dump was restored
    const ahead = signSnapshot({ ...current, version: current.version + 20 }, SECRET);
    await forge(ahead);
    await waitFor('a new epoch in the database', async () => (await dbEpoch()) !== epoch);
    const next = await dbEpoch();
    expect(compareEpochs(next, epoch)).toBeGreaterThan(0);
    await waitFor('the new epoch published', async () => (await stored()).epoch === next);
    expect((await stored()).version).toBe(await dbVersion());
    const found = await events('database_restored');
    expect(found.length).toBe(1);
    expect(found[0]!.message).toMatch(new RegExp(`version ${current.version + 20} of this cluster's epoch`));
  });

  it('starts a later epoch when the head holds a genuine snapshot of a later epoch (a reset on a host whose clock is behind)', async () => {
    const current = await stored();
    const later = newEpoch(null, Date.now() + 24 * 3600_000);
    await forge(signSnapshot({ ...current, version: 1, epoch: later }, SECRET));
    await waitFor('an epoch past the foreign one', async () => compareEpochs(await dbEpoch(), later) > 0);
    await waitFor('it published', async () => (await stored()).epoch === (await dbEpoch()));
    expect((await events('foreign_epoch')).length).toBe(1);
  });

  it('replaces a stored snapshot written over alone, under the genuine head (periodic full check)', async () => {
    const before = (await events('forged_head')).length;
    const genuine = (await bus.fetchLatest())!;
    await raw.set(keys.snapshot, JSON.stringify({ ...fakeSnapshot(genuine.version, genuine.epoch, 'another-cluster-secret-of-32-bytes!!'), hash: genuine.hash }));
    await waitFor('the genuine snapshot back', async () => (await raw.get(keys.snapshot)) === JSON.stringify(genuine));
    const found = await events('forged_head');
    expect(found.length).toBe(before + 1);
    expect(found.at(-1)!.message).toMatch(/not the one its head announces/);
  });

  it('says so on GET /status', async () => {
    const { body } = await request(app).get('/status').expect(200);
    expect(body.publisher).toMatchObject({ epoch: await dbEpoch(), version: await dbVersion(), last_error: null, database_reachable: true });
    expect(body.publisher.events.map((e: { kind: string }) => e.kind)).toEqual(['forged_head', 'forged_head', 'database_restored', 'foreign_epoch', 'forged_head']);
  });
});

function compiledCopy(): { load(snapshot: Snapshot): void; applyDelta(delta: SnapshotDelta): void } {
  let compiled: CompiledConfig | null = null;
  return {
    load: (snapshot) => {
      compiled = compile(snapshot);
    },
    applyDelta: (delta) => {
      compiled = applyDelta(compiled!, delta);
    },
  };
}
