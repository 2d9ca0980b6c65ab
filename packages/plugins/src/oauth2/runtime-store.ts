import type { PluginRuntime, RedisClient } from '../contract';
import { purgeClearTokens, RedisTokenStore } from './redis-token-store';
import type { TokenStore } from './token-store';
import { runtimeState } from '../shared/runtime-state';

/** The key prefix of oauth2's entries under the deployment's Redis prefix (`gatehouse:` → `gatehouse:oauth2:`). */
export function oauth2RedisPrefix(redisPrefix = ''): string {
  return `${redisPrefix}oauth2:`;
}

/** The token store of a cluster: data planes and control plane build it from the same Redis and prefix. */
export function redisTokenStore(redis: RedisClient, redisPrefix = ''): TokenStore {
  return new RedisTokenStore(redis, oauth2RedisPrefix(redisPrefix));
}

/** `purgeClearTokens` under the deployment's prefix: the control plane runs it once at start. */
export function purgeClearOAuth2Tokens(redis: RedisClient, redisPrefix = ''): Promise<number> {
  return purgeClearTokens(redis, oauth2RedisPrefix(redisPrefix));
}

/** The store over a data-plane node's Redis, opened on first use and let go when the node stops. */
export const oauth2Stores = runtimeState((runtime) => {
  let store: TokenStore | null = null;
  return {
    overRedis: (redis: RedisClient) => (store ??= redisTokenStore(redis, runtime.redisPrefix ?? '')),
    close: () => {
      store = null;
    },
  };
});

/**
 * The store a data plane gives oauth2: `runtime.oauth2Tokens`, else one over the data plane's Redis connection
 * (`runtime.redis`, keys under `<runtime.redisPrefix>oauth2:`). Without either the plugin cannot keep tokens anywhere
 * every data plane sees, so it refuses to work rather than keep them in one process.
 */
export function tokenStoreOf(runtime: PluginRuntime): TokenStore {
  if (runtime.oauth2Tokens) return runtime.oauth2Tokens;
  const redis = runtime.redis;
  if (!redis) throw new Error('oauth2 has no token store: give the data plane runtime.oauth2Tokens or runtime.redis');
  return oauth2Stores.of(runtime).overRedis(redis);
}
