import type { PluginRuntime } from '../contract';

/**
 * Where `storage: kong` keeps sessions (the cookie then holds only a random handle): the data planes' Redis, under
 * `<prefix>session:<handle>`, so every data plane finds them and a logout ends them everywhere; without Redis, this
 * process. Values are sealed as the cookies would be.
 */
export interface StoredSessions {
  get(handle: string): Promise<string | null>;
  /** `ttlSeconds`: how long the entry may live (the session's own timeouts decide sooner) */
  set(handle: string, sealed: string, ttlSeconds: number): Promise<void>;
  delete(handle: string): Promise<void>;
}

class ProcessSessions implements StoredSessions {
  private readonly entries = new Map<string, { sealed: string; until: number }>();

  async get(handle: string): Promise<string | null> {
    const entry = this.entries.get(handle);
    if (entry === undefined) return null;
    if (entry.until > Date.now()) return entry.sealed;
    this.entries.delete(handle);
    return null;
  }

  async set(handle: string, sealed: string, ttlSeconds: number): Promise<void> {
    if (this.entries.size > 100_000) this.sweep();
    this.entries.set(handle, { sealed, until: Date.now() + ttlSeconds * 1000 });
  }

  async delete(handle: string): Promise<void> {
    this.entries.delete(handle);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [handle, entry] of this.entries) if (entry.until <= now) this.entries.delete(handle);
  }
}

const inProcess = new ProcessSessions();

export function storedSessions(runtime: PluginRuntime): StoredSessions {
  const redis = runtime.redis;
  if (redis === undefined) return inProcess;
  const key = (handle: string) => `${runtime.redisPrefix ?? ''}session:${handle}`;
  return {
    get: (handle) => redis.get(key(handle)),
    set: async (handle, sealed, ttlSeconds) => void (await redis.set(key(handle), sealed, 'EX', Math.max(1, Math.ceil(ttlSeconds)))),
    delete: async (handle) => void (await redis.del(key(handle))),
  };
}
