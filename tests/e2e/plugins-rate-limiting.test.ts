// rate-limiting through the real admin API and proxy, in both topologies: the `local` policy with Kong's headers and
// 429; the `redis` policy, where every data plane spends one budget; the interface document's "low limit for anonymous,
// higher for authenticated consumers" by configuration alone; and what fault_tolerant does when Redis is unreachable.
// Embedded mode is started with REDIS_URL (and its own prefix), so `gatehouse start` also carries snapshots over Redis
// and gives its data plane the Redis the `redis` policy counts in.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { deleteRedisPrefix, freePort, SHARED_REDIS_URL, startEchoUpstream, uniqueRedisPrefix, type EchoUpstream } from '@gatehouse/testkit';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const MINUTE_MS = 60_000;
const RATE_LIMITED = { message: 'API rate limit exceeded' };

/**
 * Windows are fixed and aligned on the epoch: a test that counts in a minute window must not straddle a minute
 * boundary. When fewer than `marginMs` are left in the current window, wait for the next one to begin.
 */
async function clearOfWindowEdge(periodMs = MINUTE_MS, marginMs = 5_000): Promise<void> {
  const left = periodMs - (Date.now() % periodMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

type Answer = Awaited<ReturnType<typeof proxied>>;

/** the rate-limiting headers of an answer, by name */
function limitHeaders(res: Answer, ...names: string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));
}

describe.each(TOPOLOGIES)('rate-limiting (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let redisPrefix: string;
  let embeddedPrefix: string | null = null;
  const ids: Record<string, string> = {};

  /** the i-th request goes to data plane i mod n: consecutive requests alternate between data planes */
  const via = (i: number) => topology.dataPlanes[i % topology.dataPlanes.length]!.proxyUrl;

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function limitedRoute(label: string, config: Record<string, string>, auth?: Record<string, string>): Promise<void> {
    await created('/services/', { name: label, url: `${upstream.url}/` });
    await created(`/services/${label}/routes`, { name: label, 'paths[]': `/${label}` });
    if (auth) await created(`/services/${label}/plugins`, auth);
    await created(`/services/${label}/plugins`, { name: 'rate-limiting', ...config });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    if (name === 'embedded') {
      embeddedPrefix = uniqueRedisPrefix('e2e-rate-limiting-embedded');
      topology = await startTopology(name, {
        env: { REDIS_URL: SHARED_REDIS_URL, GATEHOUSE_REDIS_PREFIX: embeddedPrefix, GATEHOUSE_CLUSTER_SECRET: randomBytes(16).toString('hex') },
      });
    } else {
      topology = await startTopology(name);
    }
    redisPrefix = topology.dataPlanes[0]!.env.GATEHOUSE_REDIS_PREFIX!;
    expect(redisPrefix).toMatch(/^gatehouse-test:/);
    admin = adminClient(topology.adminUrl);

    for (const username of ['alice', 'bob', 'anonymous_users']) ids[username] = (await created('/consumers/', { username })).id;
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/consumers/bob/key-auth', { key: 'bob-key' });

    await limitedRoute('local', { 'config.minute': '3', 'config.hour': '100', 'config.policy': 'local' });
    await limitedRoute('local-ip', { 'config.minute': '2', 'config.limit_by': 'ip', 'config.policy': 'local' });
    await limitedRoute('shared', { 'config.minute': '6', 'config.policy': 'redis' });
    await limitedRoute('burst', { 'config.minute': '5', 'config.policy': 'redis' });

    // anonymous users get 2 a minute, authenticated consumers 20: key-auth with anonymous, a service-level limit, and
    // a limit scoped to the anonymous consumer, which wins for the requests that fell back to it
    await limitedRoute('tiered', { 'config.minute': '20', 'config.policy': 'redis' }, { name: 'key-auth', 'config.anonymous': ids.anonymous_users! });
    await created('/consumers/anonymous_users/plugins', { name: 'rate-limiting', 'config.minute': '2', 'config.policy': 'redis' });

    // a Redis of its own that nobody listens on
    const deadPort = String(await freePort());
    const unreachable = { 'config.minute': '100', 'config.policy': 'redis', 'config.redis.host': '127.0.0.1', 'config.redis.port': deadPort, 'config.redis.timeout': '300' };
    await limitedRoute('redis-down-strict', { ...unreachable, 'config.fault_tolerant': 'false' });
    await limitedRoute('redis-down-tolerant', { ...unreachable, 'config.fault_tolerant': 'true' });
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
    if (embeddedPrefix) await deleteRedisPrefix(SHARED_REDIS_URL, embeddedPrefix);
  });

  it('local: N requests pass with Kong\'s headers, request N+1 is 429 with Retry-After; each data plane counts alone', async () => {
    await clearOfWindowEdge();
    for (const dp of topology.dataPlanes) {
      for (let i = 1; i <= 3; i++) {
        const res = await proxied(`${dp.proxyUrl}/local/r`);
        expect(res.status).toBe(200);
        expect(res.body.path).toBe('/r');
        expect(limitHeaders(res, 'x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'x-ratelimit-limit-hour', 'x-ratelimit-remaining-hour', 'ratelimit-limit', 'ratelimit-remaining')).toEqual({
          'x-ratelimit-limit-minute': '3',
          'x-ratelimit-remaining-minute': String(3 - i),
          'x-ratelimit-limit-hour': '100',
          'x-ratelimit-remaining-hour': String(100 - i),
          // the most restrictive period is the minute
          'ratelimit-limit': '3',
          'ratelimit-remaining': String(3 - i),
        });
        const reset = Number(res.headers.get('ratelimit-reset'));
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
        expect(res.headers.get('retry-after')).toBeNull();
      }
      const blocked = await proxied(`${dp.proxyUrl}/local/r`);
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(RATE_LIMITED);
      expect(limitHeaders(blocked, 'x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'ratelimit-limit', 'ratelimit-remaining')).toEqual({
        'x-ratelimit-limit-minute': '3',
        'x-ratelimit-remaining-minute': '0',
        'ratelimit-limit': '3',
        'ratelimit-remaining': '0',
      });
      const retryAfter = Number(blocked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(blocked.headers.get('ratelimit-reset')).toBe(String(retryAfter));
    }
    // only the allowed requests reached the upstream: 3 per data plane
    expect(upstream.received.filter((r) => r.path === '/r')).toHaveLength(3 * topology.dataPlanes.length);
  });

  it('local, limit_by ip: a spoofed X-Forwarded-For from an untrusted client does not pick another bucket', async () => {
    await clearOfWindowEdge();
    const proxyUrl = topology.proxyUrl;
    for (let i = 0; i < 2; i++) expect((await proxied(`${proxyUrl}/local-ip`)).status).toBe(200);
    expect((await proxied(`${proxyUrl}/local-ip`)).status).toBe(429);
    for (const spoofed of ['10.1.2.3', '192.0.2.7, 10.9.9.9']) {
      const res = await proxied(`${proxyUrl}/local-ip`, { headers: { 'x-forwarded-for': spoofed } });
      expect(res.status).toBe(429);
      expect(res.body).toEqual(RATE_LIMITED);
    }
  });

  it('redis: requests alternating between data planes spend ONE budget exactly, then every data plane answers 429', async () => {
    await clearOfWindowEdge();
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await proxied(`${via(i)}/shared`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-minute')).toBe('6');
      remaining.push(res.headers.get('x-ratelimit-remaining-minute')!);
    }
    // one counter: each data plane saw the other's requests
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (let i = 0; i < 2 * topology.dataPlanes.length; i++) {
      const res = await proxied(`${via(i)}/shared`);
      expect(res.status).toBe(429);
      expect(res.body).toEqual(RATE_LIMITED);
      expect(res.headers.get('x-ratelimit-remaining-minute')).toBe('0');
    }
    // the counters are in the shared Redis, under the deployment's prefix
    const redis = new Redis(SHARED_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      const [, keys] = await redis.scan('0', 'MATCH', `${redisPrefix}ratelimit:*`, 'COUNT', 1000);
      expect(keys.length).toBeGreaterThanOrEqual(1);
    } finally {
      redis.disconnect();
    }
  });

  it('redis: concurrent requests on every data plane: exactly N pass', async () => {
    await clearOfWindowEdge();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => proxied(`${via(i)}/burst`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    const remainders = answers.filter((a) => a.status === 200).map((a) => a.headers.get('x-ratelimit-remaining-minute')).sort();
    expect(remainders).toEqual(['0', '1', '2', '3', '4']);
  });

  it('anonymous users get the low limit, authenticated consumers the higher one, each its own budget', async () => {
    await clearOfWindowEdge();
    // anonymous: 2, across data planes
    for (let i = 0; i < 2; i++) {
      const res = await proxied(`${via(i)}/tiered`);
      expect(res.status).toBe(200);
      expect(res.body.headers['x-anonymous-consumer']).toBe('true');
      expect(res.body.headers['x-consumer-id']).toBe(ids.anonymous_users);
      expect(res.headers.get('x-ratelimit-limit-minute')).toBe('2');
      expect(res.headers.get('x-ratelimit-remaining-minute')).toBe(String(1 - i));
    }
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      // a wrong key falls back to the anonymous consumer too
      const res = await proxied(`${via(i)}/tiered`, { headers: i % 2 ? { apikey: 'wrong' } : {} });
      expect(res.status).toBe(429);
      expect(res.body).toEqual(RATE_LIMITED);
      expect(res.headers.get('x-ratelimit-limit-minute')).toBe('2');
    }

    // alice: 20, well past the anonymous limit
    for (let i = 0; i < 20; i++) {
      const res = await proxied(`${via(i)}/tiered`, { headers: { apikey: 'alice-key' } });
      expect({ i, status: res.status }).toEqual({ i, status: 200 });
      expect(res.body.headers['x-consumer-id']).toBe(ids.alice);
      expect(res.headers.get('x-ratelimit-limit-minute')).toBe('20');
      expect(res.headers.get('x-ratelimit-remaining-minute')).toBe(String(19 - i));
    }
    const aliceBlocked = await proxied(`${via(20)}/tiered`, { headers: { apikey: 'alice-key' } });
    expect(aliceBlocked.status).toBe(429);
    expect(aliceBlocked.headers.get('x-ratelimit-limit-minute')).toBe('20');

    // bob has a budget of his own, and the anonymous budget stays spent
    const bob = await proxied(`${via(1)}/tiered`, { headers: { apikey: 'bob-key' } });
    expect(bob.status).toBe(200);
    expect(bob.body.headers['x-consumer-id']).toBe(ids.bob);
    expect(bob.headers.get('x-ratelimit-remaining-minute')).toBe('19');
    expect((await proxied(`${via(0)}/tiered`)).status).toBe(429);
  });

  it('Redis unreachable: fault_tolerant=false answers 500, fault_tolerant=true lets requests through without headers', async () => {
    for (const dp of topology.dataPlanes) {
      const strict = await proxied(`${dp.proxyUrl}/redis-down-strict`);
      expect(strict.status).toBe(500);
      expect(strict.body).toEqual({ message: 'An unexpected error occurred' });
      const tolerant = await proxied(`${dp.proxyUrl}/redis-down-tolerant/t`);
      expect(tolerant.status).toBe(200);
      expect(tolerant.body.path).toBe('/t');
      expect(tolerant.headers.get('x-ratelimit-limit-minute')).toBeNull();
      expect(tolerant.headers.get('ratelimit-remaining')).toBeNull();
    }
  });
});
