import type { PluginContext, PluginResponse, UpstreamResponse, RedisClient } from '../contract';
import { perConfig } from '../shared/per-config';
import { runtimeState } from '../shared/runtime-state';
import { cacheKey } from './cache-key';
import { parseCacheControl, seconds } from './cache-control';
import type { ProxyCacheConfig } from './schema';
import { sharedStorable, varyMatches } from './shared-cache';
import { MemoryCacheStore, RedisCacheStore, type CachedResponse, type CacheStore } from './stores';

/** What a data plane's memory cache holds at most when the node does not say: 64 MiB. */
export const PROXY_CACHE_MEMORY_BYTES = 64 * 1024 * 1024;

const STATE = 'proxy-cache';

/** Kept from `access` to `response` on a miss or refresh: where the response goes. */
interface PendingStore {
  key: string;
  store: CacheStore;
}

interface Prepared {
  methods: Set<string>;
  codes: Set<number>;
  /** `type/subtype` entries, `type/*` and `*\/*`; entries with parameters compared whole */
  types: string[];
}

const preparedOf = perConfig(
  (config: ProxyCacheConfig): Prepared => ({
    methods: new Set(config.request_method),
    codes: new Set(config.response_code),
    types: config.content_type.map((t) => t.replace(/\s+/g, '').toLowerCase()),
  }),
);

/** The stores of one data-plane node: its memory cache when the node gives none, and the store over its Redis. */
export const proxyCacheStores = runtimeState((runtime) => {
  let memory: MemoryCacheStore | null = null;
  let redis: RedisCacheStore | null = null;
  return {
    memory: () => (memory ??= new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES)),
    redis: (client: RedisClient) => (redis ??= new RedisCacheStore(client, runtime.redisPrefix ?? '')),
    close: () => {
      memory = null;
      redis = null;
    },
  };
});

/** The store a configuration uses on this data plane; null when `redis` is chosen and the data plane has no Redis. */
export function storeOf(ctx: PluginContext, config: ProxyCacheConfig): CacheStore | null {
  const runtime = ctx.runtime;
  if (config.strategy === 'memory') {
    return runtime.proxyCacheMemory ?? proxyCacheStores.of(runtime).memory();
  }
  const redis = runtime.redis;
  return redis === undefined ? null : proxyCacheStores.of(runtime).redis(redis);
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function requestCacheable(ctx: PluginContext, config: ProxyCacheConfig, prepared: Prepared): boolean {
  if (!prepared.methods.has(ctx.req.method)) return false;
  if (!config.cache_control) return true;
  const cc = parseCacheControl(ctx.req.headers['cache-control']);
  return !cc.has('no-store') && !cc.has('no-cache') && ctx.req.headers.authorization === undefined;
}

export function contentTypeMatches(types: readonly string[], contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const whole = contentType.replace(/\s+/g, '').toLowerCase();
  const bare = whole.split(';')[0]!;
  for (const type of types) {
    if (type === '*/*' || type === bare || type === whole) return true;
    if (type.endsWith('/*') && bare.startsWith(type.slice(0, -1))) return true;
  }
  return false;
}

/** How long a response stays fresh: the config's `cache_ttl`, or with `cache_control` what the response says. */
function freshFor(config: ProxyCacheConfig, res: UpstreamResponse, nowS: number): number | null {
  if (!config.cache_control) return config.cache_ttl;
  const cc = parseCacheControl(res.headers['cache-control']);
  if (cc.has('private') || cc.has('no-store') || cc.has('no-cache')) return null;
  let ttl = seconds(cc, 's-maxage') ?? seconds(cc, 'max-age');
  if (ttl === null) {
    const expires = Date.parse(header(res.headers.expires) ?? '');
    ttl = Number.isNaN(expires) ? 0 : Math.floor(expires / 1000 - nowS);
  }
  return ttl > 0 ? ttl : null;
}

/** Still fresh for this request: within its ttl, and, with `cache_control`, within what the request allows. */
function fresh(entry: CachedResponse, ctx: PluginContext, config: ProxyCacheConfig, nowS: number): boolean {
  const age = nowS - entry.at;
  if (age >= entry.ttl) return false;
  if (!config.cache_control) return true;
  const cc = parseCacheControl(ctx.req.headers['cache-control']);
  const maxAge = seconds(cc, 'max-age');
  if (maxAge !== null && age > maxAge) return false;
  const minFresh = seconds(cc, 'min-fresh');
  if (minFresh !== null && entry.ttl - age < minFresh) return false;
  return true;
}

type Shown = ProxyCacheConfig['response_headers'];
const ALL_SHOWN: Shown = Object.freeze({ age: true, 'X-Cache-Status': true, 'X-Cache-Key': true });

/** The cache headers this request gets: `response_headers`, or all of them when it says `kong-debug` (as Kong's). */
function shownTo(ctx: PluginContext, config: ProxyCacheConfig): Shown {
  return ctx.req.headers['kong-debug'] !== undefined ? ALL_SHOWN : config.response_headers;
}

/** A hit is answered as the upstream's response (the gateway stamps it proxied, with its latency headers). */
function hit(entry: CachedResponse, key: string, shown: Shown, nowS: number): PluginResponse {
  const headers: Record<string, string> = {};
  for (const name in entry.headers) headers[name] = header(entry.headers[name])!;
  if (shown.age) headers.age = String(Math.max(0, Math.floor(nowS - entry.at)));
  if (shown['X-Cache-Status']) headers['x-cache-status'] = 'Hit';
  if (shown['X-Cache-Key']) headers['x-cache-key'] = key;
  return { status: entry.status, body: entry.body, headers, proxied: true };
}

/** Kong's answer to `Cache-Control: only-if-cached` when nothing is cached (RFC 9111 §5.2.1.7). */
const NOT_CACHED: PluginResponse = Object.freeze({ status: 504, body: null });

function settle(ctx: PluginContext, config: ProxyCacheConfig, key: string, store: CacheStore, found: CachedResponse | null): PluginResponse | void {
  const nowS = Date.now() / 1000;
  const shown = shownTo(ctx, config);
  // an entry fetched with other values of the headers its response varies on is not this request's
  const entry = found !== null && varyMatches(ctx, found.vary) ? found : null;
  if (entry !== null && fresh(entry, ctx, config, nowS)) return hit(entry, key, shown, nowS);
  if (entry === null && config.cache_control && parseCacheControl(ctx.req.headers['cache-control']).has('only-if-cached')) return NOT_CACHED;
  ctx.locals?.set(STATE, { key, store } satisfies PendingStore);
  if (shown['X-Cache-Status']) ctx.response?.setHeader('X-Cache-Status', entry === null ? 'Miss' : 'Refresh');
}

/**
 * Kong's proxy-cache, access side: a request whose method is not cached (or, with `cache_control`, that says
 * no-store / no-cache or carries Authorization) is marked Bypass; otherwise a fresh entry under Kong's cache key is
 * answered from the cache (Hit), and a missing (Miss) or stale (Refresh) one goes upstream, to be stored by
 * `proxyCacheResponse`; with `cache_control`, `only-if-cached` and nothing cached answers 504. A cache that fails to
 * answer counts as a miss.
 */
export function proxyCacheAccess(ctx: PluginContext, config: ProxyCacheConfig): PluginResponse | void | Promise<PluginResponse | void> {
  const prepared = preparedOf(config);
  const shown = shownTo(ctx, config);
  if (!requestCacheable(ctx, config, prepared)) {
    if (shown['X-Cache-Status']) ctx.response?.setHeader('X-Cache-Status', 'Bypass');
    return;
  }
  const store = storeOf(ctx, config);
  if (store === null) {
    ctx.runtime.log?.error('proxy-cache: the redis strategy needs the data plane to have REDIS_URL', { plugin_id: ctx.pluginId });
    if (shown['X-Cache-Status']) ctx.response?.setHeader('X-Cache-Status', 'Bypass');
    return;
  }
  const req = ctx.req;
  const path = config.ignore_uri_case ? req.path.toLowerCase() : req.path;
  const key = cacheKey(
    { consumerId: ctx.consumer?.id ?? null, routeId: ctx.route?.id ?? null, method: req.method, path, query: req.query, headers: req.headers },
    config.vary_query_params,
    config.vary_headers,
  );
  if (shown['X-Cache-Key']) ctx.response?.setHeader('X-Cache-Key', key);
  let found: CachedResponse | null | Promise<CachedResponse | null>;
  try {
    found = store.get(key);
  } catch {
    found = null;
  }
  if (found === null || !(found instanceof Promise)) return settle(ctx, config, key, store, found);
  const pluginId = ctx.pluginId;
  return found.then(
    (entry) => settle(ctx, config, key, store, entry),
    (err: unknown) => {
      ctx.runtime.log?.error('proxy-cache: the cache did not answer', { plugin_id: pluginId, error: err instanceof Error ? err.message : String(err) });
      return settle(ctx, config, key, store, null);
    },
  );
}

/** Headers that describe this one answer or its connection (Kong's hop-by-hop list), never stored with the entry. */
const NOT_STORED = new Set(['x-cache-status', 'x-cache-key', 'age', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'trailers', 'upgrade']);

/**
 * The response side: a response with a listed status and content type (and, with `cache_control`, a positive
 * freshness and no private / no-store / no-cache) that a shared cache may keep (shared-cache.ts) is copied into the
 * cache as it streams to the client; any other is marked Bypass.
 */
export function proxyCacheResponse(ctx: PluginContext, config: ProxyCacheConfig, res: UpstreamResponse): void {
  const pending = ctx.locals?.get(STATE) as PendingStore | undefined;
  if (pending === undefined) return;
  const prepared = preparedOf(config);
  const nowS = Date.now() / 1000;
  const ttl = prepared.codes.has(res.status) && contentTypeMatches(prepared.types, header(res.headers['content-type'])) ? freshFor(config, res, nowS) : null;
  const storable = ttl === null ? null : sharedStorable(ctx, res);
  if (ttl === null || storable === null) {
    if (shownTo(ctx, config)['X-Cache-Status']) res.headers['x-cache-status'] = 'Bypass';
    return;
  }
  const headers: Record<string, string | string[]> = {};
  const fromPlugins = res.setByPlugins;
  for (const name in res.headers) if (!NOT_STORED.has(name) && fromPlugins?.has(name) !== true) headers[name] = res.headers[name]!;
  const status = res.status;
  const storageTtl = config.storage_ttl ?? ttl;
  const log = ctx.runtime.log;
  const pluginId = ctx.pluginId;
  res.captureBody((body) => {
    const entry: CachedResponse = { status, headers, body, at: nowS, ttl };
    if (storable.vary !== undefined) entry.vary = storable.vary;
    const stored = pending.store.set(pending.key, entry, storageTtl);
    // a store in another process (Redis, a proxy worker's primary): the response ends once the entry is there
    if (stored instanceof Promise) return stored.catch((err: unknown) => log?.error('proxy-cache: could not store a response', { plugin_id: pluginId, error: err instanceof Error ? err.message : String(err) }));
  });
}
