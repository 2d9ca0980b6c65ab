import type { RedisClient } from '../contract';
import { deleteMatching } from '../shared/redis-scan';

/** One cached response. `ttl` is how long it is fresh (s); `at` when it was stored (epoch s). */
export interface CachedResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  at: number;
  ttl: number;
  /** the request headers the response varies on, with the values of the request that fetched it */
  vary?: Record<string, string | null>;
}

export interface CacheStore {
  get(key: string): CachedResponse | null | Promise<CachedResponse | null>;
  /** keeps the entry for `storageTtl` seconds */
  set(key: string, entry: CachedResponse, storageTtl: number): void | Promise<void>;
  delete(key: string): boolean | Promise<boolean>;
  clear(): void | Promise<void>;
}

function sizeOf(entry: CachedResponse): number {
  return entry.body.length + JSON.stringify(entry.headers).length + 64;
}

/**
 * A data plane's own cache: least recently used entries leave first once the bytes held would pass `capacity`.
 * Entries past their storage time are dropped when read.
 */
export class MemoryCacheStore implements CacheStore {
  private readonly entries = new Map<string, { entry: CachedResponse; size: number; until: number }>();
  private bytes = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  get(key: string): CachedResponse | null {
    const held = this.entries.get(key);
    if (held === undefined) return null;
    this.entries.delete(key);
    if (held.until <= Date.now()) {
      this.bytes -= held.size;
      return null;
    }
    this.entries.set(key, held); // most recently used last
    return held.entry;
  }

  set(key: string, entry: CachedResponse, storageTtl: number): void {
    const size = sizeOf(entry);
    this.delete(key);
    if (size > this.capacity) return;
    while (this.bytes + size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    this.entries.set(key, { entry, size, until: Date.now() + storageTtl * 1000 });
    this.bytes += size;
  }

  delete(key: string): boolean {
    const held = this.entries.get(key);
    if (held === undefined) return false;
    this.entries.delete(key);
    this.bytes -= held.size;
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

interface StoredForm extends Omit<CachedResponse, 'body'> {
  body: string;
}

/** Where the `redis` strategy keeps entries: `<prefix>proxy-cache:<key>`; every data plane reads the same ones. */
export function redisCacheKey(prefix: string, key: string): string {
  return `${prefix}proxy-cache:${key}`;
}

/** The `redis` strategy: one cache shared by every data plane (and reachable by the control plane for purges). */
export class RedisCacheStore implements CacheStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async get(key: string): Promise<CachedResponse | null> {
    const raw = await this.redis.get(redisCacheKey(this.prefix, key));
    if (raw === null) return null;
    const stored = JSON.parse(raw) as StoredForm;
    return { ...stored, body: Buffer.from(stored.body, 'base64') };
  }

  async set(key: string, entry: CachedResponse, storageTtl: number): Promise<void> {
    const stored: StoredForm = { ...entry, body: entry.body.toString('base64') };
    await this.redis.set(redisCacheKey(this.prefix, key), JSON.stringify(stored), 'EX', Math.max(1, storageTtl));
  }

  async delete(key: string): Promise<boolean> {
    return (await this.redis.del(redisCacheKey(this.prefix, key))) > 0;
  }

  async clear(): Promise<void> {
    await clearRedisCache(this.redis, this.prefix);
  }
}

/** Deletes every proxy-cache entry under a prefix; returns how many. */
export function clearRedisCache(redis: RedisClient, prefix: string): Promise<number> {
  return deleteMatching(redis, `${prefix.replace(/[*?[\]\\]/g, '\\$&')}proxy-cache:*`);
}
