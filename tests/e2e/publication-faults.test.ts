// Publication never freezes (decision 19), in the cluster (control plane + 2 data planes over Redis and Postgres, real
// processes): a forged head (unsigned, or signed with another secret, ahead in version), a replayed old snapshot, a
// database reset while Redis keeps the old head (with a data plane restarting from a cache of the old epoch) and a
// restore of an old dump. Every data plane serves the newest config within 5 s, none goes back to an older one, and
// the control plane's GET /status says what happened.
import { createHmac, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { SignedSnapshot } from '@gatehouse/core';
import { verifySnapshot } from '@gatehouse/sync';
import { runAdminSql, SHARED_REDIS_URL, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, type Topology } from './support/topology';

const WITHIN_MS = 5_000;

interface StoredSnapshot {
  version: number;
  hash: string;
  epoch?: string;
  payload: string;
  signature: string;
}

interface PublicationEvent {
  kind: string;
  message: string;
}

describe('publication never freezes (cluster: control plane + 2 data planes)', () => {
  let upstream: EchoUpstream;
  let topology: Topology;
  let admin: ReturnType<typeof adminClient>;
  let redis: Redis;
  let keys: { snapshot: string; head: string; channel: string };
  let databaseName: string;
  /** a genuine snapshot published early on, replayed later */
  let early: string;

  const cpStatus = () => getJson(`${topology.adminUrl}/status`);
  const dpStatus = (i: number) => getJson(`${topology.dataPlanes[i]!.statusUrl}/status`);
  const events = async (kind: string): Promise<PublicationEvent[]> => ((await cpStatus()).publisher.events as PublicationEvent[]).filter((e) => e.kind === kind);
  const stored = async (): Promise<StoredSnapshot> => JSON.parse((await redis.get(keys.snapshot))!);

  /** every data plane (or the ones listed) answers `status` on `path` within 5 s */
  const servedEverywhere = async (path: string, status = 200, which = topology.dataPlanes.map((_, i) => i)) => {
    await waitUntil(
      `${path} → ${status} on data planes ${which.join(', ')}`,
      async () => {
        for (const i of which) if ((await proxied(`${topology.dataPlanes[i]!.proxyUrl}${path}`)).status !== status) return false;
        return true;
      },
      WITHIN_MS,
    );
  };

  const addRoute = async (name: string) => {
    const res = await admin.post('/services/pub/routes', { name, 'paths[]': `/${name}` });
    expect(res.status).toBe(201);
  };

  const setUpService = async () => {
    expect((await admin.post('/services/', { name: 'pub', url: upstream.url })).status).toBe(201);
  };

  /** writes a snapshot and its head straight into Redis and announces it, as anyone with access to Redis could */
  const plant = async (snapshot: StoredSnapshot) => {
    const head = JSON.stringify({ version: snapshot.version, hash: snapshot.hash, epoch: snapshot.epoch });
    await redis.set(keys.snapshot, JSON.stringify(snapshot));
    await redis.set(keys.head, head);
    await redis.publish(keys.channel, head);
  };

  /**
   * The current snapshot's content at another version, in the unsealed format, signed with `secret` ('' = unsigned).
   * The stored one is sealed: the test opens it with the cluster's secret to make the forgery as close as it gets.
   */
  const forgeFrom = (genuine: StoredSnapshot, version: number, secret: string): StoredSnapshot => {
    const content = verifySnapshot(genuine as SignedSnapshot, topology.dataPlanes[0]!.env.GATEHOUSE_CLUSTER_SECRET!);
    const payload = gzipSync(Buffer.from(JSON.stringify({ ...content, version }))).toString('base64');
    const signature = secret ? createHmac('sha256', secret).update(payload).digest('hex') : '';
    const { version: _v, payload: _p, signature: _s, cipher: _c, ...rest } = genuine as StoredSnapshot & { cipher?: string };
    return { ...rest, version, payload, signature };
  };

  const epochsOfDataPlanes = async () => Promise.all(topology.dataPlanes.map(async (_, i) => (await dpStatus(i)).sync.config_epoch as string | null));

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology('cluster');
    admin = adminClient(topology.adminUrl);
    redis = new Redis(SHARED_REDIS_URL);
    const prefix = topology.dataPlanes[0]!.env.GATEHOUSE_REDIS_PREFIX!;
    keys = { snapshot: `${prefix}snapshot`, head: `${prefix}snapshot:head`, channel: `${prefix}config` };
    databaseName = new URL(topology.databaseUrl!).pathname.slice(1);
    await setUpService();
    await addRoute('r0');
    await topology.converge();
    early = (await redis.get(keys.snapshot))!;
    await addRoute('r1');
    await servedEverywhere('/r1/x');
  }, 120_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => redis?.disconnect(),
      () => upstream?.close(),
    );
  });

  it('snapshots and data planes carry the database\'s epoch', async () => {
    const status = await cpStatus();
    expect(status.publisher.epoch).toMatch(/^\d{13}-[0-9a-f]{16}$/);
    expect((await stored()).epoch).toBe(status.publisher.epoch);
    await waitUntil('data planes on the epoch', async () => (await epochsOfDataPlanes()).every((e) => e === status.publisher.epoch), WITHIN_MS);
  });

  it('an unsigned head ahead in version: the next write is served everywhere within 5 s, and /status says the head was forged', async () => {
    await plant(forgeFrom(await stored(), 1_000_000, ''));
    await addRoute('after-unsigned');
    await servedEverywhere('/after-unsigned/x');
    const forged = await events('forged_head');
    expect(forged.some((e) => /unsigned/.test(e.message))).toBe(true);
    expect((await stored()).version).toBe((await cpStatus()).config_version);
  });

  it('a head signed with another secret, ahead in version, without any write: the control plane replaces it on its own', async () => {
    const before = (await events('forged_head')).length;
    const servedVersion = (await dpStatus(0)).config_version;
    await plant(forgeFrom(await stored(), 2_000_000, randomBytes(32).toString('hex')));
    await waitUntil('a verifiable head at the database version again', async () => (await stored()).version === (await cpStatus()).config_version, WITHIN_MS);
    const forged = await events('forged_head');
    expect(forged.length).toBe(before + 1);
    expect(forged.at(-1)!.message).toMatch(/signature does not match/);
    for (let i = 0; i < topology.dataPlanes.length; i++) expect((await dpStatus(i)).config_version).toBe(servedVersion);
    await addRoute('after-foreign-secret');
    await servedEverywhere('/after-foreign-secret/x');
  });

  it('a replayed old snapshot (genuine, older version): data planes keep the newest config, the control plane republishes and says so', async () => {
    const applied = await Promise.all(topology.dataPlanes.map(async (_, i) => (await dpStatus(i)).sync.last_applied_at as number));
    const latest = (await cpStatus()).config_version;
    const replay = JSON.parse(early) as StoredSnapshot;
    expect(replay.version).toBeLessThan(latest);
    await plant(replay);
    await waitUntil('the control plane to republish the latest version', async () => (await stored()).version === latest, WITHIN_MS);
    expect((await events('stale_head')).length).toBeGreaterThanOrEqual(1);
    // nothing was loaded meanwhile: the old snapshot never replaced the serving config, not even for a moment
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      const status = await dpStatus(i);
      expect(status.config_version).toBe(latest);
      expect(status.sync.last_applied_at).toBe(applied[i]);
    }
    await servedEverywhere('/after-foreign-secret/x');
  });

  it('a database reset while Redis keeps the old head, and a data plane restarting with a cache of the old epoch', async () => {
    const oldEpoch = (await cpStatus()).publisher.epoch as string;
    const oldVersion = (await cpStatus()).config_version as number;
    await topology.dataPlanes[1]!.process.stop(); // down during the reset: its disk cache holds the old epoch
    await topology.stopControlPlane();
    await runAdminSql([`DROP DATABASE "${databaseName}" WITH (FORCE)`, `CREATE DATABASE "${databaseName}"`]);
    await topology.startControlPlane();

    const status = await cpStatus();
    expect(status.publisher.epoch).not.toBe(oldEpoch);
    expect(status.config_version).toBeLessThan(oldVersion);
    expect((await events('epoch_changed')).length).toBe(1);
    await setUpService();
    await addRoute('after-reset');
    await servedEverywhere('/after-reset/x', 200, [0]);
    await servedEverywhere('/r1/x', 404, [0]); // the reset database has no such route

    await topology.restartDataPlane(1);
    await servedEverywhere('/after-reset/x', 200, [1]);
    await servedEverywhere('/r1/x', 404, [1]);
    const epoch = (await cpStatus()).publisher.epoch;
    expect(await epochsOfDataPlanes()).toEqual([epoch, epoch]);
  });

  it('a restore of an old dump: a new epoch, the restored config everywhere within 5 s, writes after it too', async () => {
    const copy = `${databaseName}_dump`;
    await topology.stopControlPlane();
    await runAdminSql([`CREATE DATABASE "${copy}" TEMPLATE "${databaseName}"`]); // the dump
    await topology.startControlPlane();
    await addRoute('lost-in-restore');
    await servedEverywhere('/lost-in-restore/x');
    const epochBefore = (await cpStatus()).publisher.epoch;

    await topology.stopControlPlane();
    await runAdminSql([
      `DROP DATABASE "${databaseName}" WITH (FORCE)`,
      `CREATE DATABASE "${databaseName}" TEMPLATE "${copy}"`,
      `DROP DATABASE "${copy}"`,
    ]);
    await topology.startControlPlane();
    const restored = await events('database_restored');
    expect(restored.length).toBe(1);
    expect(restored[0]!.message).toMatch(/the database was restored or reset/);
    const epoch = (await cpStatus()).publisher.epoch;
    expect(epoch).not.toBe(epochBefore);

    await servedEverywhere('/lost-in-restore/x', 404);
    await addRoute('after-restore');
    await servedEverywhere('/after-restore/x');
    expect(await epochsOfDataPlanes()).toEqual([epoch, epoch]);
  });
});
