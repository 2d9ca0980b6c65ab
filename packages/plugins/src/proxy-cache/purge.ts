import type { RedisClient } from '../contract';
import { clearRedisCache, RedisCacheStore, type CachedResponse, type MemoryCacheStore } from './stores';

/**
 * Purges reach the data planes' memory caches over Redis pub/sub on this channel (`{"key":"…"}` for one entry,
 * `{"key":null}` for all); the `redis` strategy's entries are deleted in Redis directly.
 */
export function proxyCachePurgeChannel(prefix: string): string {
  return `${prefix}proxy-cache:purge`;
}

/** Applies one purge message to a data plane's memory cache; malformed messages are ignored. */
export function applyPurgeMessage(store: MemoryCacheStore, message: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return;
  }
  const key = (parsed as { key?: unknown } | null)?.key;
  if (key === null) store.clear();
  else if (typeof key === 'string') store.delete(key);
}

/** What the control plane's `/proxy-cache` endpoints act on. */
export interface ProxyCacheAdmin {
  find(key: string): Promise<CachedResponse | null>;
  /** true when an entry was found and removed (anywhere the control plane can see) */
  delete(key: string): Promise<boolean>;
  deleteAll(): Promise<void>;
}

/** Embedded mode without Redis: the one data plane's memory cache lives in this process. */
export function localCacheAdmin(store: MemoryCacheStore): ProxyCacheAdmin {
  return {
    find: async (key) => store.get(key),
    delete: async (key) => store.delete(key),
    deleteAll: async () => store.clear(),
  };
}

/**
 * With Redis: `redis`-strategy entries are read and deleted in Redis; every purge is also published so each data
 * plane drops the same key from its memory cache. A key held only in data planes' memory is not readable here, and
 * its DELETE answers as if found (the data planes purge it on receipt).
 */
export function redisCacheAdmin(redis: RedisClient, prefix: string, local: MemoryCacheStore | null = null): ProxyCacheAdmin {
  const shared = new RedisCacheStore(redis, prefix);
  const channel = proxyCachePurgeChannel(prefix);
  return {
    find: async (key) => (await shared.get(key)) ?? local?.get(key) ?? null,
    delete: async (key) => {
      const inRedis = await shared.delete(key);
      const inMemory = local?.delete(key) ?? false;
      const receivers = await redis.publish(channel, JSON.stringify({ key }));
      return inRedis || inMemory || receivers > 0;
    },
    deleteAll: async () => {
      await clearRedisCache(redis, prefix);
      local?.clear();
      await redis.publish(channel, JSON.stringify({ key: null }));
    },
  };
}
