import { applyPurgeMessage, onDemandCertificates, processOrders, proxyCachePurgeChannel, redisOrders, type AcmeConfig, type MemoryCacheStore } from '@gatehouse/plugins';
import { openRedis, type RedisClient } from '@gatehouse/sync';
import type { DataPlaneLog } from './options';

/**
 * The Redis connection of the plugins that share state across data planes (rate-limiting's redis policy): commands
 * fail fast while Redis is down, so a plugin's fault_tolerant setting decides, not a queue. Null without Redis.
 */
export function pluginRedis(url: string | null): RedisClient | null {
  if (!url) return null;
  const redis = openRedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, retryStrategy: (n) => Math.min(n * 100, 2000) });
  redis.on('error', () => {});
  return redis;
}

/** proxy-cache purges from the admin API, over Redis pub/sub, applied to the node's memory cache; null without Redis */
export function subscribeCachePurges(url: string | null, prefix: string, cache: MemoryCacheStore, log: Pick<DataPlaneLog, 'warn'>): RedisClient | null {
  if (!url) return null;
  const purges = openRedis(url, { retryStrategy: (n) => Math.min(n * 100, 2000) });
  purges.on('error', () => {});
  purges.on('message', (_channel: string, message: string) => applyPurgeMessage(cache, message));
  purges.subscribe(proxyCachePurgeChannel(prefix)).catch((err: unknown) => log.warn('proxy-cache purge channel unavailable', { error: err instanceof Error ? err.message : String(err) }));
  return purges;
}

/**
 * What a proxy does with a TLS handshake the default certificate answers: when the acme plugin covers the name, it
 * asks the control plane to order a certificate (over Redis, or in this process for `gatehouse start` alone).
 */
export function acmeOnDemand(holder: { current: { indexes: ReadonlyMap<string, unknown> } }, redis: RedisClient | undefined, prefix: string): (servername: string) => void {
  const orders = redis ? redisOrders(redis, prefix) : processOrders;
  return onDemandCertificates(() => (holder.current.indexes.get('acme') as AcmeConfig | null | undefined) ?? null, orders);
}
