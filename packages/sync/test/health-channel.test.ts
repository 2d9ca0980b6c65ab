import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deleteRedisPrefix, freePort, requireRedis, SHARED_REDIS_URL, startRedisServer, uniqueRedisPrefix } from '@gatehouse/testkit';
import { MemoryHealthChannel, RedisHealthChannel, type DataPlaneHealthReport, type HealthChannel, type ManualHealthCommand } from '../src';

/** The health channel between the planes, in memory and over Redis: same semantics. */

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const prefixes: string[] = [];
beforeAll(async () => {
  await requireRedis();
});
afterAll(async () => {
  for (const prefix of prefixes) await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
});

const report = (id: string, at: number): DataPlaneHealthReport => ({
  data_plane_id: id,
  hostname: `host-${id}`,
  at,
  config_version: 3,
  upstreams: { u1: { health: 'HEALTHY', targets: [{ target: '10.0.0.1:80', health: 'HEALTHY', addresses: [{ ip: '10.0.0.1', port: 80, health: 'HEALTHY', weight: 100 }] }] } },
});

describe.each<[string, () => HealthChannel]>([
  ['memory', () => new MemoryHealthChannel()],
  [
    'redis',
    () => {
      const prefix = uniqueRedisPrefix('health');
      prefixes.push(prefix);
      return new RedisHealthChannel({ url: SHARED_REDIS_URL, prefix });
    },
  ],
])('%s health channel', (_name, make) => {
  it('lists the reports of live data planes, most recent first, and drops stale ones', async () => {
    const channel = make();
    const now = Math.floor(Date.now() / 1000);
    await channel.report(report('a', now - 5));
    await channel.report(report('b', now));
    await channel.report(report('old', now - 120));
    const listed = await channel.list(30);
    expect(listed.map((r) => r.data_plane_id)).toEqual(['b', 'a']);
    expect(listed[0]).toEqual(report('b', now));
    await channel.report(report('a', now + 1));
    expect((await channel.list(30)).map((r) => r.data_plane_id)).toEqual(['a', 'b']);
    await channel.close();
  });

  it('delivers manual health commands to every subscriber', async () => {
    const publisher = make();
    const heardA: ManualHealthCommand[] = [];
    const heardB: ManualHealthCommand[] = [];
    const subA = await publisher.subscribeManual((c) => heardA.push(c));
    const subB = await publisher.subscribeManual((c) => heardB.push(c));
    const command = { upstream_id: 'u1', target: '10.0.0.1:80', address: '10.0.0.1:80', healthy: false };
    await publisher.publishManual(command);
    await until(() => heardA.length === 1 && heardB.length === 1, 'both subscribers');
    expect(heardA).toEqual([command]);
    await subA.close();
    await subB.close();
    await publisher.close();
  });
});

describe('redis health channel across an outage', () => {
  it('a subscriber that started while Redis was down hears commands once it is up', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const channel = new RedisHealthChannel({ url, prefix: uniqueRedisPrefix('health-outage') });
    const heard: ManualHealthCommand[] = [];
    const sub = await channel.subscribeManual((c) => heard.push(c));
    const server = await startRedisServer({ port });
    try {
      const command = { upstream_id: 'u1', target: 'a.test:8000', healthy: true };
      // publishing fails fast until the command connection is back; the subscriber resubscribes by itself
      await until(() => {
        void channel.publishManual(command).catch(() => {});
        return heard.length > 0;
      }, 'the command after Redis came up', 15_000);
      expect(heard[0]).toEqual(command);
    } finally {
      await sub.close();
      await channel.close();
      await server.stop();
    }
  });
});
