// Data planes keep serving through Redis and control-plane outages and their own restarts (disk cache), converge
// again on their own, and refuse forged snapshots. The cluster runs on a redis-server of its own that the test stops
// and restarts by PID; the shared Redis is never touched.
import { createHmac } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { startEchoUpstream, startRedisServer, type EchoUpstream, type RedisServerHandle } from '@gatehouse/testkit';
import { cleanUp, getJson, RestartProbe, SteadyLoad, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, type Topology } from './support/topology';

const KEYED = { headers: { apikey: 'steady-key' } };

async function setUp(topology: Topology, upstream: EchoUpstream) {
  const admin = adminClient(topology.adminUrl);
  const steps: Array<[string, Record<string, string>]> = [
    ['/services/', { name: 'steady', url: upstream.url }],
    ['/services/steady/routes', { name: 'steady', 'paths[]': '/steady' }],
    ['/services/steady/plugins', { name: 'key-auth' }],
    ['/consumers/', { username: 'steady' }],
    ['/consumers/steady/key-auth', { key: 'steady-key' }],
  ];
  for (const [path, form] of steps) {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  }
  await topology.converge();
  return admin;
}

const statusOf = (topology: Topology, i: number) => getJson(`${topology.dataPlanes[i]!.statusUrl}/status`);

describe('resilience (cluster: control plane + 2 data planes over a Redis of its own)', () => {
  let redis: RedisServerHandle;
  let upstream: EchoUpstream;
  let topology: Topology;
  let admin: ReturnType<typeof adminClient>;
  let loads: SteadyLoad[] = [];
  let prefix: string;

  /** both loads stay error-free for `count` more successful requests each */
  const steadyFor = async (count = 30) => {
    await Promise.all(loads.map((load) => load.moreSuccesses(count)));
    for (const load of loads) expect(load.failures).toEqual([]);
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    upstream = await startEchoUpstream();
    topology = await startTopology('cluster', { redisUrl: redis.url });
    prefix = topology.dataPlanes[0]!.env.GATEHOUSE_REDIS_PREFIX!;
    admin = await setUp(topology, upstream);
    loads = topology.dataPlanes.map((dp) => new SteadyLoad(() => `${dp.proxyUrl}/steady`, KEYED));
    for (const load of loads) load.start();
    await steadyFor(10);
  });

  afterAll(async () => {
    await cleanUp(
      () => Promise.all(loads.map((load) => load.stop())),
      () => topology?.stop(),
      () => redis?.stop(),
      () => upstream?.close(),
    );
  });

  it('keeps proxying with zero errors while Redis is stopped; the control plane keeps answering admin writes', async () => {
    const servedVersion = (await statusOf(topology, 0)).config_version;
    await redis.stop();
    expect(redis.isRunning()).toBe(false);
    await steadyFor();

    const route = await admin.post('/services/steady/routes', { name: 'during-outage', 'paths[]': '/during-outage' });
    expect(route.status).toBe(201);
    const consumer = await admin.post('/consumers/', { username: 'late' });
    expect(consumer.status).toBe(201);
    expect((await admin.post('/consumers/late/key-auth', { key: 'late-key' })).status).toBe(201);
    const { config_version: latest } = await getJson(`${topology.adminUrl}/status`);
    expect(latest).toBeGreaterThan(servedVersion);

    await steadyFor();
    for (let i = 0; i < topology.dataPlanes.length; i++) expect((await statusOf(topology, i)).config_version).toBe(servedVersion);
  });

  it('converges to the latest version without manual action when Redis returns (empty)', async () => {
    await redis.restart();
    await topology.converge(30_000);
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/during-outage/x`, { headers: { apikey: 'late-key' } });
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/x');
    }
    await steadyFor(10);
  });

  it('keeps proxying with zero errors while the control plane is stopped', async () => {
    await topology.stopControlPlane();
    expect(topology.controlPlane.isRunning()).toBe(false);
    await steadyFor();
  });

  it('restarts from its disk cache with Redis and the control plane both down, and serves with zero errors', async () => {
    await redis.stop();
    await steadyFor(10);
    const before = await statusOf(topology, 0);
    await loads[0]!.pause();
    const probe = new RestartProbe(`${topology.dataPlanes[0]!.proxyUrl}/steady`, KEYED.headers);
    try {
      await topology.restartDataPlane(0);
      await waitUntil('the probe to get answers from the restarted data plane', () => (probe.answers[200] ?? 0) >= 20);
    } finally {
      // the later tests need the steady load running, whatever happens here
      loads[0]!.resume();
    }
    // the port opens only once the cached config is loaded: no 404 from an empty config in between
    expect({ answers: await probe.stop(), samples: probe.samples }).toEqual({ answers: {}, samples: [] });
    const after = await statusOf(topology, 0);
    expect(after.config_version).toBe(before.config_version);
    expect(after.configuration_hash).toBe(before.configuration_hash);
    expect(after.sync.source).toBe('cache');
    expect((await fetch(`${topology.dataPlanes[0]!.statusUrl}/status/ready`)).status).toBe(200);
    await steadyFor();
    const late = await proxied(`${topology.dataPlanes[0]!.proxyUrl}/during-outage`, { headers: { apikey: 'late-key' } });
    expect(late.status).toBe(200);
  });

  it('converges again once Redis and the control plane are back, the restarted data plane included', async () => {
    await redis.restart();
    await topology.startControlPlane();
    expect((await admin.post('/services/steady/routes', { name: 'after-outage', 'paths[]': '/after-outage' })).status).toBe(201);
    await topology.converge(30_000);
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/after-outage`, KEYED)).status).toBe(200);
    await steadyFor(10);
  });

  it('rejects a forged snapshot written straight to Redis and keeps serving the old config', async () => {
    const serving = await statusOf(topology, 0);
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const stored = JSON.parse((await client.get(`${prefix}snapshot`))!);
      // the stored snapshot is sealed: an attacker with Redis access cannot read it
      expect(stored.cipher).toBe('aes-256-gcm');
      expect(() => gunzipSync(Buffer.from(stored.payload, 'base64'))).toThrow();
      // so the forger writes a config of its own (the route without its key-auth plugin) in the unsealed format
      const snapshot = { version: serving.config_version + 1, hash: 'f'.repeat(32), config: { services: [], routes: [], plugins: [], consumers: [] } };
      const payload = gzipSync(Buffer.from(JSON.stringify(snapshot))).toString('base64');
      // the forger copies the cluster epoch too: an announcement of an earlier epoch (none) is not even fetched
      const forged = {
        version: snapshot.version,
        hash: snapshot.hash,
        epoch: stored.epoch,
        payload,
        signature: createHmac('sha256', 'not-the-cluster-secret').update(payload).digest('hex'),
      };
      await client.set(`${prefix}snapshot`, JSON.stringify(forged));
      await client.publish(`${prefix}config`, JSON.stringify({ version: forged.version, hash: forged.hash, epoch: forged.epoch }));

      await Promise.all(
        topology.dataPlanes.map((_, i) =>
          waitUntil(`data plane ${i} to reject the forged snapshot`, async () => /signature does not match/.test((await statusOf(topology, i)).sync.last_error ?? '')),
        ),
      );
      for (let i = 0; i < topology.dataPlanes.length; i++) {
        const status = await statusOf(topology, i);
        expect(status.config_version).toBe(serving.config_version);
        expect(status.configuration_hash).toBe(serving.configuration_hash);
        const withoutKey = await proxied(`${topology.dataPlanes[i]!.proxyUrl}/steady`);
        expect(withoutKey.status).toBe(403);
      }

      // an unsigned one is refused the same way
      const unsigned = { ...forged, version: forged.version + 1, signature: '' };
      await client.set(`${prefix}snapshot`, JSON.stringify(unsigned));
      await client.publish(`${prefix}config`, JSON.stringify({ version: unsigned.version, hash: unsigned.hash, epoch: unsigned.epoch }));
      await Promise.all(
        topology.dataPlanes.map((_, i) =>
          waitUntil(`data plane ${i} to reject the unsigned snapshot`, async () => /unsigned/.test((await statusOf(topology, i)).sync.last_error ?? '')),
        ),
      );
      for (let i = 0; i < topology.dataPlanes.length; i++) expect((await statusOf(topology, i)).config_version).toBe(serving.config_version);
    } finally {
      client.disconnect();
    }
    await steadyFor(10);

    // the next real change still reaches everyone
    expect((await admin.post('/services/steady/routes', { name: 'after-forgery', 'paths[]': '/after-forgery' })).status).toBe(201);
    await topology.converge(30_000);
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/after-forgery`, KEYED)).status).toBe(200);
  });

  it('saw zero failed requests across every outage', async () => {
    const results = await Promise.all(loads.map((load) => load.stop()));
    for (const result of results) {
      expect(result.failures).toEqual([]);
      expect(result.ok).toBeGreaterThan(100);
    }
  });
});

describe('resilience (embedded)', () => {
  let upstream: EchoUpstream;
  let topology: Topology;
  let load: SteadyLoad;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology('embedded');
    await setUp(topology, upstream);
    load = new SteadyLoad(() => `${topology.proxyUrl}/steady`, KEYED);
    load.start();
    await load.moreSuccesses(10);
  });

  afterAll(async () => {
    await cleanUp(
      () => load?.stop(),
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  it('a restarted gatehouse serves the same configuration at once and with zero errors', async () => {
    const before = await statusOf(topology, 0);
    await load.pause();
    const probe = new RestartProbe(`${topology.proxyUrl}/steady`, KEYED.headers);
    await topology.restartDataPlane(0);
    await waitUntil('the probe to get answers from the restarted process', () => (probe.answers[200] ?? 0) >= 20);
    expect({ answers: await probe.stop(), samples: probe.samples }).toEqual({ answers: {}, samples: [] });
    const after = await statusOf(topology, 0);
    expect(after.config_version).toBe(before.config_version);
    expect(after.configuration_hash).toBe(before.configuration_hash);
    expect((await fetch(`${topology.dataPlanes[0]!.statusUrl}/status/ready`)).status).toBe(200);
    load.resume();
    await load.moreSuccesses(30);
    expect(load.failures).toEqual([]);
    expect((await proxied(`${topology.proxyUrl}/steady`)).status).toBe(403);
  });
});
