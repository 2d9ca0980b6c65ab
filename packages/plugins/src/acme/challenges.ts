import type { RedisClient } from '../contract';

/** Where pending HTTP-01 challenges wait until the CA fetches them: token → key authorization. */
export interface AcmeChallengeStore {
  put(token: string, keyAuthorization: string, ttlMs: number): Promise<void>;
  get(token: string): Promise<string | null>;
  delete(token: string): Promise<void>;
}

/** In this process: the control plane and the data plane of `gatehouse start` without Redis share it. */
class ProcessChallengeStore implements AcmeChallengeStore {
  private readonly pending = new Map<string, { value: string; until: number }>();

  async put(token: string, keyAuthorization: string, ttlMs: number): Promise<void> {
    this.pending.set(token, { value: keyAuthorization, until: Date.now() + ttlMs });
  }

  async get(token: string): Promise<string | null> {
    const entry = this.pending.get(token);
    if (entry === undefined) return null;
    if (entry.until <= Date.now()) {
      this.pending.delete(token);
      return null;
    }
    return entry.value;
  }

  async delete(token: string): Promise<void> {
    this.pending.delete(token);
  }
}

export const processChallenges: AcmeChallengeStore = new ProcessChallengeStore();

/** In the Redis every data plane shares, under `<prefix>acme:http01:<token>`: any data plane answers the CA. */
export function redisChallenges(redis: Pick<RedisClient, 'set' | 'get' | 'del'>, prefix: string): AcmeChallengeStore {
  const key = (token: string) => `${prefix}acme:http01:${token}`;
  return {
    put: async (token, keyAuthorization, ttlMs) => void (await redis.set(key(token), keyAuthorization, 'PX', ttlMs)),
    get: (token) => redis.get(key(token)),
    delete: async (token) => void (await redis.del(key(token))),
  };
}
