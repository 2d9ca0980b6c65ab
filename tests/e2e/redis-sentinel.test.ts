// The cluster bus over Redis Sentinel (REDIS_URL=redis+sentinel://…/<master>): real redis-server (master and replica)
// and redis-sentinel processes started here on free ports and stopped by PID. The master is killed: data planes keep
// serving, the sentinel promotes the replica, and a write made afterwards reaches every data plane.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { freePort, spawnProcess, startEchoUpstream, startRedisServer, type EchoUpstream, type RedisServerHandle, type SpawnedProcess } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, type Topology } from './support/topology';

jest.setTimeout(300_000);

async function replicationReady(replica: RedisServerHandle): Promise<boolean> {
  const redis = new Redis(replica.url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.info('replication')).includes('master_link_status:up');
  } finally {
    redis.disconnect();
  }
}

async function masterPort(sentinelPort: number): Promise<number | null> {
  const sentinel = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  sentinel.on('error', () => {});
  try {
    await sentinel.connect();
    const addr = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', 'gh-master')) as [string, string] | null;
    return addr ? Number(addr[1]) : null;
  } finally {
    sentinel.disconnect();
  }
}

describe('cluster bus over Redis Sentinel', () => {
  let master: RedisServerHandle;
  let replica: RedisServerHandle;
  let sentinel: SpawnedProcess;
  let sentinelDir: string;
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let sentinelPort: number;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    master = await startRedisServer();
    replica = await startRedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
    await waitUntil('the replica in sync', () => replicationReady(replica), 20_000);
    sentinelPort = await freePort();
    sentinelDir = mkdtempSync(join(tmpdir(), 'gatehouse-sentinel-'));
    const conf = join(sentinelDir, 'sentinel.conf');
    writeFileSync(
      conf,
      [`port ${sentinelPort}`, 'bind 127.0.0.1', `dir ${sentinelDir}`, `sentinel monitor gh-master 127.0.0.1 ${master.port} 1`, 'sentinel down-after-milliseconds gh-master 1000', 'sentinel failover-timeout gh-master 5000', ''].join('\n'),
    );
    sentinel = await spawnProcess('redis-sentinel', [conf], { name: `redis-sentinel :${sentinelPort}`, readyPattern: /\+monitor master/, timeoutMs: 15_000 });
    topology = await startTopology('cluster', { redisUrl: `redis+sentinel://127.0.0.1:${sentinelPort}/gh-master` });
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services', { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await admin.post('/services/echo/routes', { 'paths[]': '/before' })).status).toBe(201);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => sentinel?.stop(),
      () => replica?.stop(),
      () => master?.stop(),
      () => upstream?.close(),
      () => sentinelDir && rmSync(sentinelDir, { recursive: true, force: true }),
    );
  });

  it('keeps serving through a master failover and publishes to the promoted replica', async () => {
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/before`)).status).toBe(200);
    const killedAt = Date.now();
    await master.stop();
    await waitUntil('the sentinel to promote the replica', async () => (await masterPort(sentinelPort)) === replica.port, 30_000, 200);
    const promotedAt = Date.now();
    // data planes serve from memory while the bus moves
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/before`)).status).toBe(200);
    expect((await admin.post('/services/echo/routes', { 'paths[]': '/after' })).status).toBe(201);
    for (const dp of topology.dataPlanes) {
      await waitUntil(`data plane ${dp.proxyUrl} to serve the new route`, async () => (await proxied(`${dp.proxyUrl}/after`)).status === 200, 60_000, 100);
    }
    const convergedAt = Date.now();
    process.stdout.write(`sentinel failover: promoted ${((promotedAt - killedAt) / 1000).toFixed(1)} s after the kill; a write reached every data plane ${((convergedAt - promotedAt) / 1000).toFixed(1)} s after the promotion\n`);
    expect(topology.dataPlanes.every((dp) => dp.process.isRunning())).toBe(true);
  });
});
