// proxy-cache through the real admin API and proxy, in both topologies, against the echo upstream: Kong's cache key
// and X-Cache-Status (Miss, Hit, Refresh, Bypass), the request/response filters, vary settings, cache_control, the
// `redis` strategy shared by every data plane, and the /proxy-cache admin endpoints. Embedded mode is started with
// REDIS_URL (and a prefix of its own) so the `redis` strategy has its Redis there too.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deleteRedisPrefix, SHARED_REDIS_URL, startEchoUpstream, uniqueRedisPrefix, type EchoUpstream } from '@gatehouse/testkit';
import { startHeaderUpstream, type HeaderUpstream } from './support/header-upstream';
import { waitUntil } from './support/helpers';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

describe.each(TOPOLOGIES)('proxy-cache (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  /** answers with the response headers the query string names (Vary, Set-Cookie, Cache-Control) */
  let headerUpstream: HeaderUpstream;
  let embeddedPrefix: string | null = null;
  const routeIds: Record<string, string> = {};
  const pluginIds: Record<string, string> = {};
  const consumerIds: Record<string, string> = {};

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);

  async function cachedRoute(label: string, config: Record<string, unknown>, before: Array<Record<string, unknown>> = [], serviceUrl = `${upstream.url}/`): Promise<void> {
    await created('/services', { name: label, url: serviceUrl });
    routeIds[label] = (await created(`/services/${label}/routes`, { name: label, paths: [`/${label}`] })).id;
    for (const plugin of before) await created(`/routes/${label}/plugins`, plugin);
    pluginIds[label] = (await created(`/routes/${label}/plugins`, { name: 'proxy-cache', config })).id;
  }

  const via = (i: number, path: string) => `${topology.dataPlanes[i % topology.dataPlanes.length]!.proxyUrl}${path}`;
  const status = (res: { headers: Headers }) => res.headers.get('x-cache-status');
  const reached = (path: string) => upstream.received.filter((r) => r.path === path).length;
  /** a `redis` entry is written once its response has gone out: wait until the shared cache holds it */
  const stored = (key: string | null) => waitUntil(`entry ${key} stored`, async () => (await admin('GET', `/proxy-cache/${key}`)).status === 200, 5_000, 20);

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    headerUpstream = await startHeaderUpstream();
    if (name === 'embedded') {
      embeddedPrefix = uniqueRedisPrefix('e2e-proxy-cache-embedded');
      topology = await startTopology(name, { env: { REDIS_URL: SHARED_REDIS_URL, GATEHOUSE_REDIS_PREFIX: embeddedPrefix, GATEHOUSE_CLUSTER_SECRET: randomBytes(16).toString('hex') } });
    } else {
      topology = await startTopology(name);
    }
    await cachedRoute('pc-mem', { strategy: 'memory' });
    await cachedRoute('pc-redis', { strategy: 'redis' });
    await cachedRoute('pc-html', { strategy: 'memory', content_type: ['text/html'] });
    await cachedRoute('pc-post', { strategy: 'memory', request_method: ['POST'], response_code: [200] });
    await cachedRoute('pc-ttl', { strategy: 'redis', cache_ttl: 1, storage_ttl: 60 });
    await cachedRoute('pc-vary', { strategy: 'memory', vary_query_params: ['a'], vary_headers: ['X-V'] });
    await cachedRoute('pc-cc', { strategy: 'memory', cache_control: true }, [{ name: 'response-transformer', config: { add: { headers: ['cache-control:max-age=60'] } } }]);
    await cachedRoute('pc-cc-none', { strategy: 'memory', cache_control: true });
    await cachedRoute('pc-auth', { strategy: 'redis' }, [{ name: 'key-auth' }]);
    await cachedRoute('pc-cors', { strategy: 'memory' }, [{ name: 'cors', config: { origins: ['http://one.example', 'http://two.example'] } }]);
    await cachedRoute('pc-headers', { strategy: 'memory', response_headers: { age: false, 'X-Cache-Status': false, 'X-Cache-Key': false } });
    for (const strategy of ['memory', 'redis']) await cachedRoute(`pc-safe-${strategy}`, { strategy }, [], `${headerUpstream.url}/`);
    for (const username of ['alice', 'bob']) {
      consumerIds[username] = (await created('/consumers', { username })).id;
      await created(`/consumers/${username}/key-auth`, { key: `${username}-key` });
    }
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
    await headerUpstream?.close();
    if (embeddedPrefix) await deleteRedisPrefix(SHARED_REDIS_URL, embeddedPrefix);
  });

  it("Miss then Hit, with Kong's cache key (sha256 of route|method|path|sorted query|vary headers) and Age", async () => {
    const first = await proxied(via(0, '/pc-mem/a?z=1&b=2&b=1'));
    expect(first.status).toBe(200);
    expect(status(first)).toBe('Miss');
    const key = createHash('sha256').update(`${routeIds['pc-mem']}|GET|/pc-mem/a|b=1,2:z=1|`).digest('hex');
    expect(first.headers.get('x-cache-key')).toBe(key);
    const second = await proxied(via(0, '/pc-mem/a?b=2&z=1&b=1'));
    expect(status(second)).toBe('Hit');
    expect(second.headers.get('x-cache-key')).toBe(key);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('content-type')).toBe('application/json');
    expect(Number(second.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(reached('/a')).toBe(1);
  });

  it('redis strategy: a response cached through one data plane is a hit through every other', async () => {
    const first = await proxied(via(0, '/pc-redis/shared'));
    expect(status(first)).toBe('Miss');
    await stored(first.headers.get('x-cache-key'));
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      const res = await proxied(via(i, '/pc-redis/shared'));
      expect([i, status(res)]).toEqual([i, 'Hit']);
      expect(res.body).toEqual(first.body);
    }
    expect(reached('/shared')).toBe(1);
  });

  it('Bypass: methods not listed, response codes not listed, content types not listed', async () => {
    const post = await proxied(via(0, '/pc-mem/p'), { method: 'POST', body: 'x' });
    expect(status(post)).toBe('Bypass');
    expect(post.headers.get('x-cache-key')).toBeNull();
    const failed = await proxied(via(0, '/pc-mem/e'), { headers: { 'x-echo-status': '500' } });
    expect([failed.status, status(failed)]).toEqual([500, 'Bypass']);
    expect(status(await proxied(via(0, '/pc-mem/e'), { headers: { 'x-echo-status': '500' } }))).toBe('Bypass');
    // 404 is one of the default response codes
    expect(status(await proxied(via(0, '/pc-mem/nf'), { headers: { 'x-echo-status': '404' } }))).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-mem/nf'), { headers: { 'x-echo-status': '404' } }))).toBe('Hit');
    expect(status(await proxied(via(0, '/pc-html/j')))).toBe('Bypass');
    expect(status(await proxied(via(0, '/pc-html/j')))).toBe('Bypass');
    expect(reached('/j')).toBe(2);
    // request_method: POST only
    expect(status(await proxied(via(0, '/pc-post/q'), { method: 'POST', body: 'x' }))).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-post/q'), { method: 'POST', body: 'x' }))).toBe('Hit');
    expect(status(await proxied(via(0, '/pc-post/q')))).toBe('Bypass');
  });

  it('cache_ttl: a stale entry is a Refresh, fetched and stored again', async () => {
    expect(status(await proxied(via(0, '/pc-ttl/t')))).toBe('Miss');
    let last: string | null = null;
    await waitUntil('the entry to go stale', async () => {
      last = status(await proxied(via(0, '/pc-ttl/t')));
      return last === 'Refresh';
    }, 10_000, 200);
    expect(last).toBe('Refresh');
    // the refreshed response is stored again: a hit until it goes stale in its turn
    await waitUntil('the refreshed entry to answer', async () => status(await proxied(via(0, '/pc-ttl/t'))) === 'Hit', 5_000, 20);
  });

  it('vary_query_params and vary_headers choose what makes two requests different', async () => {
    expect(status(await proxied(via(0, '/pc-vary/v?a=1&b=1'), { headers: { 'x-v': 'one' } }))).toBe('Miss');
    // b is not varied on: the same entry
    expect(status(await proxied(via(0, '/pc-vary/v?a=1&b=2'), { headers: { 'x-v': 'one' } }))).toBe('Hit');
    expect(status(await proxied(via(0, '/pc-vary/v?a=2&b=1'), { headers: { 'x-v': 'one' } }))).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-vary/v?a=1&b=1'), { headers: { 'x-v': 'two' } }))).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-vary/v?a=1'), { headers: { 'x-v': 'two' } }))).toBe('Hit');
    // without vary_query_params every argument counts
    expect(status(await proxied(via(0, '/pc-mem/v?a=1&b=1')))).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-mem/v?a=1&b=2')))).toBe('Miss');
  });

  it('cache_control: the response\'s max-age makes it cacheable, request no-cache bypasses, no freshness means no caching', async () => {
    const first = await proxied(via(0, '/pc-cc/c'));
    expect(first.headers.get('cache-control')).toBe('max-age=60');
    expect(status(first)).toBe('Miss');
    expect(status(await proxied(via(0, '/pc-cc/c')))).toBe('Hit');
    expect(status(await proxied(via(0, '/pc-cc/c'), { headers: { 'cache-control': 'no-cache' } }))).toBe('Bypass');
    expect(status(await proxied(via(0, '/pc-cc/c'), { headers: { authorization: 'Basic eDp5' } }))).toBe('Bypass');
    expect(status(await proxied(via(0, '/pc-cc-none/c')))).toBe('Bypass');
    expect(status(await proxied(via(0, '/pc-cc-none/c')))).toBe('Bypass');
  });

  it('the consumer is part of the key: each consumer has its own entry', async () => {
    const alice = await proxied(via(0, '/pc-auth/me'), { headers: { apikey: 'alice-key' } });
    expect(status(alice)).toBe('Miss');
    expect(alice.headers.get('x-cache-key')).toBe(createHash('sha256').update(`${consumerIds.alice}:${routeIds['pc-auth']}|GET|/pc-auth/me||`).digest('hex'));
    expect(status(await proxied(via(0, '/pc-auth/me'), { headers: { apikey: 'bob-key' } }))).toBe('Miss');
    await stored(alice.headers.get('x-cache-key'));
    const again = await proxied(via(1, '/pc-auth/me'), { headers: { apikey: 'alice-key' } });
    expect(status(again)).toBe('Hit');
    expect(again.body.headers['x-consumer-username']).toBe('alice');
  });

  it("a hit carries this request's plugin headers (cors), not those of the request that filled the cache", async () => {
    const first = await proxied(via(0, '/pc-cors/o'), { headers: { origin: 'http://one.example' } });
    expect([status(first), first.headers.get('access-control-allow-origin')]).toEqual(['Miss', 'http://one.example']);
    const second = await proxied(via(0, '/pc-cors/o'), { headers: { origin: 'http://two.example' } });
    expect([status(second), second.headers.get('access-control-allow-origin')]).toEqual(['Hit', 'http://two.example']);
    const stranger = await proxied(via(0, '/pc-cors/o'), { headers: { origin: 'http://three.example' } });
    expect([status(stranger), stranger.headers.get('access-control-allow-origin')]).toEqual(['Hit', null]);
  });

  it('response_headers can hide Age, X-Cache-Status and X-Cache-Key', async () => {
    await proxied(via(0, '/pc-headers/h'));
    const res = await proxied(via(0, '/pc-headers/h'));
    expect([res.headers.get('age'), status(res), res.headers.get('x-cache-key')]).toEqual([null, null, null]);
    expect(reached('/h')).toBe(1);
  });

  it('admin: GET and DELETE /proxy-cache/{key}, /proxy-cache/{plugin}/caches/{key}, DELETE /proxy-cache', async () => {
    const first = await proxied(via(0, '/pc-redis/admin'));
    const key = first.headers.get('x-cache-key')!;
    await stored(key);
    const entry = await admin('GET', `/proxy-cache/${key}`);
    expect(entry.status).toBe(200);
    expect(entry.body).toMatchObject({ key, status: 200, ttl: 300 });
    expect(JSON.parse(entry.body.body).path).toBe('/admin');
    expect((await admin('GET', `/proxy-cache/${pluginIds['pc-redis']}/caches/${key}`)).status).toBe(200);
    // another plugin id (the last hex digit changed, whatever it was) has no such entry
    const otherId = pluginIds['pc-mem']!.replace(/.$/, (last) => (last === '0' ? '1' : '0'));
    expect((await admin('GET', `/proxy-cache/${otherId}/caches/${key}`)).status).toBe(404);
    expect((await admin('DELETE', `/proxy-cache/${key}`)).status).toBe(204);
    expect((await admin('GET', `/proxy-cache/${key}`)).status).toBe(404);
    expect(status(await proxied(via(1, '/pc-redis/admin')))).toBe('Miss');

    // purge everything: memory entries on every data plane and redis entries alike
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      await proxied(via(i, '/pc-mem/purge'));
      expect(status(await proxied(via(i, '/pc-mem/purge')))).toBe('Hit');
    }
    const purged = await proxied(via(0, '/pc-redis/purge'));
    expect(status(purged)).toBe('Miss');
    await stored(purged.headers.get('x-cache-key'));
    expect((await admin('DELETE', '/proxy-cache')).status).toBe(204);
    expect(status(await proxied(via(1, '/pc-redis/purge')))).toBe('Miss');
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      // the memory purge travels over pub/sub: wait until this data plane has it
      await waitUntil(`data plane ${i} purged`, async () => status(await proxied(via(i, '/pc-mem/purge'))) === 'Miss', 5_000, 100);
    }
  });

  it('schema: strategy is required; Kong Manager gets the form from /schemas/plugins/proxy-cache', async () => {
    const missing = await admin('POST', '/plugins', { name: 'proxy-cache' });
    expect(missing.status).toBe(400);
    expect(missing.body.fields.config.strategy).toBe('required field missing');
    const schema = await admin('GET', '/schemas/plugins/proxy-cache');
    expect(schema.status).toBe(200);
  });

  describe.each(['memory', 'redis'])('a safe shared cache (decision 29), %s strategy', (strategy) => {
    // upstream paths of their own per strategy (both services reach the same upstream)
    const at = (path: string) => via(0, `/pc-safe-${strategy}/${strategy}${path}`);
    const hitsUpstream = (path: string) => headerUpstream.received.get(`/${strategy}${path}`) ?? 0;
    /** a memory entry is in place when its response ends; only Redis entries are readable through the admin API */
    const storedBy = (key: string | null) => (strategy === 'redis' ? stored(key) : Promise.resolve());

    it('a response fetched with Authorization or Cookie and no consumer is never served to anyone else', async () => {
      for (const [i, credentials] of ([{ authorization: 'Bearer alice-token' }, { cookie: 'session=alice' }] as Array<Record<string, string>>).entries()) {
        const path = `/private-${i}`;
        const first = await proxied(at(path), { headers: credentials });
        expect([first.status, status(first)]).toEqual([200, 'Bypass']);
        const anonymous = await proxied(at(path));
        expect(status(anonymous)).toBe('Miss');
        expect(anonymous.body.headers.authorization).toBeUndefined();
        expect(hitsUpstream(path)).toBe(2);
      }
    });

    it('unless the response says public, s-maxage or must-revalidate', async () => {
      for (const [i, cc] of ['public', 's-maxage=60', 'must-revalidate'].entries()) {
        const path = `/shareable-${i}?Cache-Control=${encodeURIComponent(cc)}`;
        const first = await proxied(at(path), { headers: { authorization: 'Bearer alice-token' } });
        expect([cc, status(first)]).toEqual([cc, 'Miss']);
        await storedBy(first.headers.get('x-cache-key'));
        expect([cc, status(await proxied(at(path)))]).toEqual([cc, 'Hit']);
      }
    });

    it('a response with Set-Cookie is never stored', async () => {
      const path = `/cookie?Set-Cookie=${encodeURIComponent('session=abc')}&Cache-Control=public`;
      expect(status(await proxied(at(path)))).toBe('Bypass');
      const again = await proxied(at(path));
      expect([status(again), again.headers.get('set-cookie')]).toEqual(['Bypass', 'session=abc']);
      expect(hitsUpstream('/cookie')).toBe(2);
    });

    it('the request headers named in Vary are part of the key; Vary: * is never stored', async () => {
      const path = '/vary?Vary=Accept-Language';
      const fr = await proxied(at(path), { headers: { 'accept-language': 'fr' } });
      expect(status(fr)).toBe('Miss');
      await storedBy(fr.headers.get('x-cache-key'));
      const frAgain = await proxied(at(path), { headers: { 'accept-language': 'fr' } });
      expect([status(frAgain), frAgain.body.headers['accept-language']]).toEqual(['Hit', 'fr']);
      const de = await proxied(at(path), { headers: { 'accept-language': 'de' } });
      expect([status(de), de.body.headers['accept-language']]).toEqual(['Miss', 'de']);
      expect(hitsUpstream('/vary')).toBe(2);
      const star = '/star?Vary=*';
      expect(status(await proxied(at(star)))).toBe('Bypass');
      expect(status(await proxied(at(star)))).toBe('Bypass');
    });
  });

  describe("Kong's specs (spec/03-plugins/31-proxy-cache/02-access_spec.lua)", () => {
    it('only-if-cached', async () => {
      const res = await proxied(via(0, '/pc-cc/only?not=here'), { headers: { 'cache-control': 'only-if-cached' } });
      expect([res.status, res.body]).toEqual([504, '']);
      expect(reached('/only')).toBe(0);
    });

    it('X-Kong-Proxy-Latency', async () => {
      const miss = await proxied(via(0, '/pc-mem/get?show-me=proxy-latency'));
      expect([miss.status, status(miss)]).toEqual([200, 'Miss']);
      expect(miss.headers.get('x-kong-proxy-latency')).toMatch(/^\d+$/);
      const hit = await proxied(via(0, '/pc-mem/get?show-me=proxy-latency'));
      expect([hit.status, status(hit)]).toEqual([200, 'Hit']);
      expect(hit.headers.get('x-kong-proxy-latency')).toMatch(/^\d+$/);
      expect(hit.headers.get('x-kong-response-latency')).toBeNull();
    });

    it('X-Kong-Upstream-Latency', async () => {
      const miss = await proxied(via(0, '/pc-mem/get?show-me=upstream-latency'));
      expect([miss.status, status(miss)]).toEqual([200, 'Miss']);
      expect(miss.headers.get('x-kong-upstream-latency')).toMatch(/^\d+$/);
      const hit = await proxied(via(0, '/pc-mem/get?show-me=upstream-latency'));
      expect([hit.status, status(hit)]).toEqual([200, 'Hit']);
      expect(hit.headers.get('x-kong-upstream-latency')).toMatch(/^\d+$/);
    });

    it('No X-Cache* neither age headers on the response without debug header in the query', async () => {
      await proxied(via(0, '/pc-headers/debug'));
      const quiet = await proxied(via(0, '/pc-headers/debug'));
      expect([quiet.status, status(quiet), quiet.headers.get('x-cache-key'), quiet.headers.get('age')]).toEqual([200, null, null, null]);
      const debug = await proxied(via(0, '/pc-headers/debug'), { headers: { 'kong-debug': '1' } });
      expect(status(debug)).toBe('Hit');
      expect(debug.headers.get('age')).not.toBeNull();
      expect(debug.headers.get('x-cache-key')).toMatch(/^[0-9a-f]{64}$/);
      expect(reached('/debug')).toBe(1);
    });
  });
});
