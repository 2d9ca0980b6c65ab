import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { Consumer, Route } from '@gatehouse/core';
import type { PluginResponse, PluginRuntime } from '../contract';
import { fakeContext, fakeResponse, type FakeRequest } from '../../test/support/fake-context';
import { cacheKey } from './cache-key';
import { contentTypeMatches, proxyCacheAccess, proxyCacheResponse } from './handler';
import { proxyCache } from './index';
import { applyPurgeMessage } from './purge';
import { proxyCacheConfigSchema } from './schema';
import { sharedStorable, varyNames } from './shared-cache';
import { MemoryCacheStore, type CachedResponse } from './stores';

const route = { id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa' } as Route;
const consumer = { id: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc' } as Consumer;

async function through(config: Record<string, unknown>, request: FakeRequest, upstream: { status?: number; headers?: Record<string, string | string[]>; body?: string } = {}) {
  const parsed = proxyCacheConfigSchema.parse({ strategy: 'memory', ...config });
  const { ctx, recorded } = fakeContext({ route, ...request });
  const answer = (await proxyCacheAccess(ctx, parsed)) as PluginResponse | undefined;
  if (answer !== undefined) return { answer, status: answer.headers?.['x-cache-status'], recorded };
  const response = fakeResponse(upstream.status ?? 200, { 'content-type': 'application/json', ...Object.fromEntries(recorded.response), ...upstream.headers }, upstream.body ?? '{}');
  proxyCacheResponse(ctx, parsed, response);
  response.finish();
  return { answer, status: response.headers['x-cache-status'] as string | undefined, recorded };
}

describe('proxy-cache', () => {
  it("Kong's name, priority and defaults; strategy required", () => {
    expect([proxyCache.name, proxyCache.priority]).toEqual(['proxy-cache', 100]);
    const config = proxyCacheConfigSchema.parse({ strategy: 'memory' });
    expect(config).toMatchObject({ response_code: [200, 301, 404], request_method: ['GET', 'HEAD'], content_type: ['text/plain', 'application/json'], cache_ttl: 300, cache_control: false, storage_ttl: null, memory: { dictionary_name: 'kong_db_cache' } });
    expect(proxyCacheConfigSchema.safeParse({}).success).toBe(false);
    expect(proxyCacheConfigSchema.safeParse({ strategy: 'memory', response_code: [] }).success).toBe(false);
    expect(proxyCacheConfigSchema.safeParse({ strategy: 'memory', cache_ttl: 0 }).success).toBe(false);
  });

  it("the key: sha256 of prefix|method|path|params|headers, as Kong builds it", () => {
    const input = { consumerId: null, routeId: route.id, method: 'GET', path: '/p', query: new URLSearchParams('b=2&a=1&b=1'), headers: { 'x-v': 'v' } };
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(cacheKey(input, null, null)).toBe(sha(`${route.id}|GET|/p|a=1:b=1,2|`));
    expect(cacheKey(input, ['b'], ['X-V'])).toBe(sha(`${route.id}|GET|/p|b=1,2|X-V=v`));
    expect(cacheKey({ ...input, consumerId: consumer.id }, null, null)).toBe(sha(`${consumer.id}:${route.id}|GET|/p|a=1:b=1,2|`));
    expect(cacheKey({ ...input, routeId: null }, null, null)).toBe(sha('00000000-0000-0000-0000-000000000000|GET|/p|a=1:b=1,2|'));
  });

  it('Miss stores, Hit answers from the cache with Age, X-Cache-Status and X-Cache-Key', async () => {
    const runtime: PluginRuntime = { proxyCacheMemory: new MemoryCacheStore(1 << 20) };
    const miss = await through({}, { runtime, path: '/x' }, { body: '{"n":1}' });
    expect(miss.status).toBe('Miss');
    const hit = await through({}, { runtime, path: '/x' });
    expect(hit.status).toBe('Hit');
    expect(hit.answer?.status).toBe(200);
    expect(hit.answer?.body).toEqual(Buffer.from('{"n":1}'));
    expect(hit.answer?.headers?.['x-cache-key']).toBe(miss.recorded.response.get('x-cache-key'));
    expect(hit.answer?.headers?.age).toBe('0');
  });

  it('Bypass for methods, codes and content types not listed', async () => {
    const runtime: PluginRuntime = { proxyCacheMemory: new MemoryCacheStore(1 << 20) };
    expect((await through({}, { runtime, method: 'POST' })).recorded.response.get('x-cache-status')).toBe('Bypass');
    expect((await through({}, { runtime, path: '/e' }, { status: 500 })).status).toBe('Bypass');
    expect((await through({}, { runtime, path: '/t' }, { headers: { 'content-type': 'text/html' } })).status).toBe('Bypass');
    expect(contentTypeMatches(['application/json'], 'application/json; charset=utf-8')).toBe(true);
    expect(contentTypeMatches(['text/*'], 'text/html')).toBe(true);
    expect(contentTypeMatches(['application/json; charset=utf-8'], 'application/json')).toBe(false);
  });

  it('cache_control: request no-store bypasses; s-maxage / max-age give the ttl; private is not stored', async () => {
    const memory = new MemoryCacheStore(1 << 20);
    const runtime: PluginRuntime = { proxyCacheMemory: memory };
    expect((await through({ cache_control: true }, { runtime, headers: { 'cache-control': 'no-store' } })).recorded.response.get('x-cache-status')).toBe('Bypass');
    expect((await through({ cache_control: true }, { runtime, path: '/p' }, { headers: { 'cache-control': 'private, max-age=60' } })).status).toBe('Bypass');
    expect((await through({ cache_control: true }, { runtime, path: '/m' }, { headers: { 'cache-control': 'max-age=60' } })).status).toBe('Miss');
    const key = (await through({ cache_control: true }, { runtime, path: '/m' })).answer?.headers?.['x-cache-key'];
    expect(memory.get(key!)?.ttl).toBe(60);
    // the request may ask for fresher than the entry's age allows
    const refresh = await through({ cache_control: true }, { runtime, path: '/m', headers: { 'cache-control': 'min-fresh=120' } }, { headers: { 'cache-control': 'max-age=60' } });
    expect(refresh.recorded.response.get('x-cache-status')).toBe('Refresh');
  });

  it('the memory store is an LRU bounded by bytes; purge messages drop one key or all', () => {
    const entry = (size: number): CachedResponse => ({ status: 200, headers: {}, body: Buffer.alloc(size), at: 0, ttl: 60 });
    const store = new MemoryCacheStore(1000);
    store.set('a', entry(300), 60);
    store.set('b', entry(300), 60);
    store.get('a');
    store.set('c', entry(300), 60);
    expect([store.get('a') !== null, store.get('b') !== null, store.get('c') !== null]).toEqual([true, false, true]);
    expect(store.usedBytes).toBeLessThanOrEqual(1000);
    store.set('huge', entry(5000), 60);
    expect(store.get('huge')).toBeNull();
    applyPurgeMessage(store, JSON.stringify({ key: 'a' }));
    expect(store.get('a')).toBeNull();
    applyPurgeMessage(store, 'not json');
    applyPurgeMessage(store, JSON.stringify({ key: null }));
    expect([store.size, store.usedBytes]).toEqual([0, 0]);
  });

  describe('a safe shared cache (decision 29)', () => {
    const fresh = () => ({ runtime: { proxyCacheMemory: new MemoryCacheStore(1 << 20) } as PluginRuntime });

    it('a response to a request with Authorization or Cookie and no consumer is not stored, unless public, s-maxage or must-revalidate', async () => {
      for (const credentials of [{ authorization: 'Bearer alice' }, { cookie: 'session=alice' }] as Array<Record<string, string>>) {
        const { runtime } = fresh();
        expect((await through({}, { runtime, path: '/me', headers: credentials })).status).toBe('Bypass');
        // an anonymous client never gets what the credentialed one fetched
        expect((await through({}, { runtime, path: '/me' })).status).toBe('Miss');
        for (const cc of ['public, max-age=60', 's-maxage=60', 'must-revalidate']) {
          expect((await through({}, { runtime, path: `/shared-${cc}`, headers: credentials }, { headers: { 'cache-control': cc } })).status).toBe('Miss');
          expect((await through({}, { runtime, path: `/shared-${cc}` })).status).toBe('Hit');
        }
        expect((await through({}, { runtime, path: '/p', headers: credentials }, { headers: { 'cache-control': 'max-age=60' } })).status).toBe('Bypass');
      }
    });

    it('an identified consumer is part of the key: its response is stored; the anonymous consumer identifies nobody', async () => {
      const { runtime } = fresh();
      const headers = { authorization: 'Basic eDp5' };
      expect((await through({}, { runtime, path: '/c', headers, consumer })).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/c', headers, consumer })).status).toBe('Hit');
      expect((await through({}, { runtime, path: '/c' })).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/a', headers, consumer, anonymous: true })).status).toBe('Bypass');
    });

    it('a response with Set-Cookie is never stored, whatever it says', async () => {
      const { runtime } = fresh();
      expect((await through({}, { runtime, path: '/s' }, { headers: { 'set-cookie': 'id=1', 'cache-control': 'public, max-age=60' } })).status).toBe('Bypass');
      expect((await through({}, { runtime, path: '/s' })).status).toBe('Miss');
    });

    it('the request headers named in Vary are part of the key; Vary: * is never stored', async () => {
      const { runtime } = fresh();
      const vary = { headers: { vary: 'Accept-Language, accept-encoding' } };
      expect((await through({}, { runtime, path: '/v', headers: { 'accept-language': 'fr' } }, vary)).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/v', headers: { 'accept-language': 'fr' } })).status).toBe('Hit');
      expect((await through({}, { runtime, path: '/v', headers: { 'accept-language': 'de' } }, vary)).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/v' }, vary)).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/v' })).status).toBe('Hit');
      expect((await through({}, { runtime, path: '/v', headers: { 'accept-encoding': 'gzip' } }, vary)).status).toBe('Miss');
      expect((await through({}, { runtime, path: '/star' }, { headers: { vary: '*' } })).status).toBe('Bypass');
      expect((await through({}, { runtime, path: '/star' })).status).toBe('Miss');
    });

    it("Vary is read from the upstream's own header, not a plugin's (cors's Origin is set again on every hit)", () => {
      const { ctx } = fakeContext({ headers: { origin: 'http://a.test', 'accept-language': 'fr' } });
      const res = { ...fakeResponse(200, { vary: ['Accept-Language', 'Origin'] }), setByPlugins: new Set(['vary']), replaced: { vary: 'Accept-Language' } };
      expect(sharedStorable(ctx, res)).toEqual({ vary: { 'accept-language': 'fr' } });
      expect(varyNames('a, *')).toBeNull();
    });
  });

  describe("Kong's specs", () => {
    it('only-if-cached', async () => {
      const { runtime } = { runtime: { proxyCacheMemory: new MemoryCacheStore(1 << 20) } as PluginRuntime };
      const answer = await through({ cache_control: true }, { runtime, path: '/get', query: 'not=here', headers: { 'cache-control': 'only-if-cached' } });
      expect(answer.answer).toEqual({ status: 504, body: null });
      // without cache_control the directive is not read
      expect((await through({}, { runtime, path: '/get', headers: { 'cache-control': 'only-if-cached' } })).status).toBe('Miss');
    });

    it('No X-Cache* neither age headers on the response without debug header in the query', async () => {
      const runtime: PluginRuntime = { proxyCacheMemory: new MemoryCacheStore(1 << 20) };
      const hidden = { response_headers: { age: false, 'X-Cache-Status': false, 'X-Cache-Key': false } };
      expect((await through(hidden, { runtime, path: '/get' })).recorded.response.size).toBe(0);
      const quiet = await through(hidden, { runtime, path: '/get' });
      expect(quiet.answer?.headers).toEqual({ 'content-type': 'application/json' });
      const debug = await through(hidden, { runtime, path: '/get', headers: { 'kong-debug': '1' } });
      expect(debug.answer?.headers).toMatchObject({ 'x-cache-status': 'Hit', age: '0' });
      expect(debug.answer?.headers?.['x-cache-key']).toMatch(/^[0-9a-f]{64}$/);
      // a hit is answered as the upstream's response: the gateway stamps its latency headers as for a proxied one
      expect(debug.answer?.proxied).toBe(true);
    });
  });
});
