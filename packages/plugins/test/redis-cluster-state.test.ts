// The plugins' shared state over a Redis Cluster: a real 3-master cluster of redis-server processes started here and
// stopped by PID. Keys under a hash-tagged prefix share a slot, so transactions and multi-key commands work; purges
// scan every master, whichever holds the keys.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Cluster } from 'ioredis';
import { openRedisForTest, startRedisCluster, type RedisClusterHandle } from '@gatehouse/testkit';
import { clearRedisCache, oauth2TokenDigest as digest, purgeClearOAuth2Tokens, RedisCacheStore, redisTokenStore, type OAuth2Token } from '../src';
import { deleteMatching } from '../src/shared/redis-scan';

jest.setTimeout(60_000);

const PREFIX = '{plugins-test:}';

describe('plugin state in a Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let redis: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    redis = openRedisForTest(cluster.url);
  });

  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it('keeps and clears proxy-cache entries', async () => {
    const store = new RedisCacheStore(redis, PREFIX);
    for (const key of ['a', 'b', 'c']) await store.set(key, { status: 200, headers: {}, body: Buffer.from(key), ttl: 60, at: 0 }, 60);
    expect((await store.get('b'))?.body.toString()).toBe('b');
    expect(await clearRedisCache(redis, PREFIX)).toBe(3);
    expect(await store.get('b')).toBeNull();
  });

  it('saves oauth2 tokens in one transaction and purges entries kept in clear', async () => {
    const now = Date.now();
    const token: OAuth2Token = {
      id: 'f4c1a2e0-0000-4000-8000-000000000001',
      created_at: Math.floor(now / 1000),
      credential: { id: 'cred-1' },
      service: null,
      token_type: 'bearer',
      expires_in: 60,
      access_token_digest: digest('access-1'),
      refresh_token_digest: digest('refresh-1'),
      authenticated_userid: null,
      scope: null,
      issued_at_ms: now,
      refresh_expires_at_ms: now + 60_000,
      removed_at_ms: now + 60_000,
    };
    const store = redisTokenStore(redis, PREFIX);
    await store.saveToken(token);
    expect(await store.findByAccessDigest(digest('access-1'))).toEqual(token);
    await redis.set(`${PREFIX}oauth2:access:clear-token`, '{}');
    expect(await purgeClearOAuth2Tokens(redis, PREFIX)).toBe(1);
    expect(await store.findByAccessDigest(digest('access-1'))).toEqual(token);
  });

  it('finds keys on every master when deleting by pattern', async () => {
    // keys without a shared hash tag spread over the masters
    const keys = Array.from({ length: 30 }, (_, i) => `spread-${i}`);
    for (const key of keys) await redis.set(key, '1');
    // one key after another: thirty questions at once, each on a connection of its own, can outlast the helper's
    // connect timeout on a loaded machine
    const owners = new Set<number>();
    for (const key of keys) owners.add((await cluster.masterOf(key)).port);
    expect(owners.size).toBe(3);
    let removed = 0;
    for (const key of keys) removed += await deleteMatching(redis, key);
    expect(removed).toBe(30);
  });
});
