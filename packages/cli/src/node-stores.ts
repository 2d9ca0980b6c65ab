import { localCacheAdmin, MemoryCacheStore, MemoryTokenStore, processOrders, PROXY_CACHE_MEMORY_BYTES, purgeClearOAuth2Tokens, redisCacheAdmin, redisOrders, redisTokenStore, type OAuth2TokenStore } from '@gatehouse/plugins';
import { openRedis } from '@gatehouse/sync';
import type { Logger } from './logger';
import type { NodeMetrics } from './node-metrics';
import type { Role, Settings } from './settings';

/** The node-wide stores the admin API and the proxy share: oauth2 tokens, acme orders, the memory proxy-cache. */
export function openNodeStores(settings: Settings, role: Role, metrics: NodeMetrics, log: Logger) {
  // oauth2 tokens live where every data plane sees them: Redis in a cluster, one shared store in one process
  const tokenRedis = settings.redisUrl && role !== 'data_plane' ? openRedis(settings.redisUrl, { maxRetriesPerRequest: 1 }) : null;
  tokenRedis?.on('error', () => {});
  if (tokenRedis) metrics.watchRedis(tokenRedis);
  // tokens an earlier release kept in clear go once, in the background
  if (tokenRedis) {
    purgeClearOAuth2Tokens(tokenRedis, settings.redisPrefix).then(
      (removed) => removed > 0 && log.warn('oauth2 tokens stored in clear by an earlier release removed; their clients must ask for new ones', { keys: removed }),
      (err: Error) => log.warn('oauth2 tokens stored in clear could not be removed; trying again at the next start', { error: err.message }),
    );
  }
  // acme: the names data planes ask certificates for arrive here over Redis (or in this process)
  const acmeSubscriber = tokenRedis && settings.redisUrl ? openRedis(settings.redisUrl, { retryStrategy: (n) => Math.min(n * 100, 2000) }) : null;
  acmeSubscriber?.on('error', () => {});
  const acmeOrders = tokenRedis && acmeSubscriber ? redisOrders(tokenRedis, settings.redisPrefix, acmeSubscriber) : processOrders;
  const tokens: OAuth2TokenStore | null = tokenRedis ? redisTokenStore(tokenRedis, settings.redisPrefix) : role === 'all' ? new MemoryTokenStore() : null;
  // proxy-cache: the data plane's memory cache; the admin API purges it in place (one process) or over Redis
  const cacheMemory = role !== 'control_plane' ? new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES) : null;
  const cacheAdmin = tokenRedis ? redisCacheAdmin(tokenRedis, settings.redisPrefix, cacheMemory) : cacheMemory ? localCacheAdmin(cacheMemory) : null;
  return {
    tokenRedis,
    acmeOrders,
    tokens,
    cacheMemory,
    cacheAdmin,
    close: () => {
      tokenRedis?.disconnect();
      acmeSubscriber?.disconnect();
    },
  };
}
