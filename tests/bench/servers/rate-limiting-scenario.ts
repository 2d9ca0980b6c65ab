// key-auth + rate-limiting in front of UPSTREAM_URL, for the two rate-limiting scenario scripts.
// Send `apikey: <API_KEY>` (default bench-key). The limit (RATE_LIMIT per minute, by consumer; default 1e12) is high
// enough that every request is counted and let through. The redis policy uses REDIS_URL (default the local Redis)
// under a key prefix of its own, removed when the script stops.
import { Redis } from 'ioredis';
import { deleteRedisPrefix, makeConsumer, makeCredential, makePlugin, uniqueRedisPrefix } from '@gatehouse/testkit';
import { serveGateway } from './dataplane-serve';

export async function serveKeyAuthRateLimiting(policy: 'local' | 'redis'): Promise<void> {
  const limit = Number(process.env.RATE_LIMIT ?? 1e12);
  const consumer = makeConsumer({ username: 'bench' });
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = uniqueRedisPrefix('bench');
  const redis = policy === 'redis' ? new Redis(redisUrl) : null;
  if (redis) await redis.ping();

  await serveGateway({
    consumers: [consumer],
    credentials: { keyauth_credentials: [makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' })] },
    plugins: (serviceId) => [
      makePlugin({ name: 'key-auth', service: { id: serviceId }, config: {} }),
      makePlugin({ name: 'rate-limiting', service: { id: serviceId }, config: { minute: limit, policy } }),
    ],
    runtime: redis ? { redis, redisPrefix: prefix } : {},
    cleanup: async () => {
      if (redis) {
        redis.disconnect();
        await deleteRedisPrefix(redisUrl, prefix);
      }
    },
  });
}
