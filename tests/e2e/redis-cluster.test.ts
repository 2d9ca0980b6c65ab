// The cluster bus and the plugins' shared Redis state over a Redis Cluster (REDIS_URL=redis+cluster://…): a real
// 3-master, 3-replica cluster of redis-server processes started here on free ports, joined with redis-cli, and stopped
// by PID. Publication reaches the data planes, rate-limiting's redis policy spends one budget across two data planes,
// and the master holding the deployment's keys is killed under load and writes.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AdminWriter, convergence, openRedisForTest, ServeLoad, startEchoUpstream, startRedisCluster, VersionWatch, type EchoUpstream, type RedisClusterHandle } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, type Topology } from './support/topology';

jest.setTimeout(240_000);

const HOUR_MS = 3_600_000;

describe('cluster bus and plugin state over a Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  /** the hash-tagged prefix every key of the deployment carries */
  let keyPrefix: string;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    topology = await startTopology('cluster', { redisUrl: cluster.url });
    keyPrefix = `{${topology.redisPrefix!}}`;
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services', { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await admin.post('/services/echo/routes', { name: 'before', 'paths[]': '/before' })).status).toBe(201);
    expect((await admin.post('/services/echo/routes', { name: 'shared', 'paths[]': '/shared' })).status).toBe(201);
    expect((await admin.post('/routes/shared/plugins', { name: 'rate-limiting', 'config.hour': '6', 'config.policy': 'redis' })).status).toBe(201);
    await topology.converge(30_000);
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => cluster?.stop(),
      () => upstream?.close(),
    );
  });

  it('publishes to every data plane; the bus keys share one hash slot in the cluster', async () => {
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/before`)).status).toBe(200);
    const redis = openRedisForTest(cluster.url);
    try {
      const head = JSON.parse((await redis.get(`${keyPrefix}snapshot:head`))!) as { version: number };
      expect(head.version).toBe((await admin.get('/status')).body.config_version);
      expect(await redis.exists(`${topology.redisPrefix!}snapshot:head`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('rate-limiting with the redis policy spends one budget across both data planes', async () => {
    if (HOUR_MS - (Date.now() % HOUR_MS) < 10_000) await new Promise((r) => setTimeout(r, HOUR_MS - (Date.now() % HOUR_MS) + 100));
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await proxied(`${topology.dataPlanes[i % 2]!.proxyUrl}/shared`);
      expect(res.status).toBe(200);
      remaining.push(res.headers.get('x-ratelimit-remaining-hour')!);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/shared`)).status).toBe(429);
  });

  it('keeps serving when the master holding the deployment is killed, and publishes every acknowledged write after the failover', async () => {
    const proxies = topology.dataPlanes.map((dp) => dp.proxyUrl);
    const load = new ServeLoad(proxies.map((p) => `${p}/before`));
    const watch = new VersionWatch(topology.dataPlanes.map((dp) => dp.statusUrl));
    const writer = new AdminWriter(() => [topology.adminUrl], 'echo', 'cluster-drill');
    await waitUntil('a few acknowledged writes', () => writer.acknowledged.length >= 5, 30_000);
    const master = await cluster.masterOf(`${keyPrefix}snapshot:head`);
    cluster.kill(master);
    const promoted = await cluster.waitHealthy(`${keyPrefix}snapshot:head`, 30_000);
    expect(promoted.port).not.toBe(master.port);
    const promotedAt = Date.now();
    // publication resumes within 10 s of the promotion: a write made now reaches both data planes
    const marker = await admin.post('/services/echo/routes', { name: 'after-failover', 'paths[]': '/after-failover' });
    expect(marker.status).toBe(201);
    await convergence(proxies, ['/after-failover'], 10_000 - (Date.now() - promotedAt));
    const written = await writer.stop();
    await convergence(proxies, written.acknowledged, 30_000);
    const served = await load.stop();
    const regressions = await watch.stop();
    process.stdout.write(
      `redis cluster failover: ${served.ok} requests served, ${served.failures.length} failed; ${written.acknowledged.length} writes acknowledged, ` +
        `none lost; publication resumed ${((Date.now() - promotedAt) / 1000).toFixed(1)} s after the promotion\n`,
    );
    expect(served.failures).toEqual([]);
    expect(regressions).toEqual([]);
    expect(topology.dataPlanes.every((dp) => dp.process.isRunning())).toBe(true);
  });
});
