import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { Consumer, Route } from '@gatehouse/core';
import type { PluginResponse, PluginRuntime } from '../contract';
import { fakeContext, fakeResponse, type FakeRequest } from '../shared/fake-context';
import { cacheKey } from './cache-key';
import { contentTypeMatches, proxyCacheAccess, proxyCacheResponse } from './handler';
import { proxyCache } from './index';
import { applyPurgeMessage } from './purge';
import { proxyCacheConfigSchema } from './schema';
import { MemoryCacheStore, type CachedResponse } from './stores';

const route = { id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa' } as Route;
const consumer = { id: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc' } as Consumer;

async function through(config: Record<string, unknown>, request: FakeRequest, upstream: { status?: number; headers?: Record<string, string>; body?: string } = {}) {
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
});
