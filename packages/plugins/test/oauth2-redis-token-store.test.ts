import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { SHARED_REDIS_URL, deleteRedisPrefix, uniqueRedisPrefix } from '@gatehouse/testkit';
import { RedisTokenStore, redisTokenStore, type OAuth2AuthorizationCode, type OAuth2Token } from '../src';

function token(fields: Partial<OAuth2Token> = {}): OAuth2Token {
  const n = randomUUID().replaceAll('-', '');
  const now = Date.now();
  return {
    id: randomUUID(),
    created_at: Math.floor(now / 1000),
    credential: { id: 'cred-1' },
    service: { id: 'svc-1' },
    token_type: 'bearer',
    expires_in: 7200,
    access_token: `at${n}`,
    refresh_token: `rt${n}`,
    authenticated_userid: 'u',
    scope: 'read',
    issued_at_ms: now,
    removed_at_ms: now + 60_000,
    ...fields,
  };
}

const code = (value: string): OAuth2AuthorizationCode => ({
  code: value,
  created_at: 0,
  credential: { id: 'cred-1' },
  service: null,
  authenticated_userid: 'u',
  scope: null,
  challenge: 'c',
  challenge_method: 'S256',
});

describe('RedisTokenStore on the shared Redis', () => {
  const prefix = uniqueRedisPrefix('oauth2');
  let a: Redis;
  let b: Redis;
  let storeA: RedisTokenStore;
  let storeB: RedisTokenStore;

  beforeAll(async () => {
    a = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    b = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    storeA = new RedisTokenStore(a, `${prefix}oauth2:`);
    storeB = redisTokenStore(b, prefix) as RedisTokenStore;
    await Promise.all([a.ping(), b.ping()]);
  });

  afterAll(async () => {
    a?.disconnect();
    b?.disconnect();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
  });

  it('shows a token saved through one connection to another at once', async () => {
    const t = token();
    await storeA.saveToken(t);
    expect(await storeB.findByAccessToken(t.access_token)).toEqual(t);
    expect(await storeB.findByRefreshToken(t.refresh_token!)).toEqual(t);
    expect(await storeB.findById(t.id)).toEqual(t);
    expect(await storeB.findByAccessToken('missing')).toBeNull();
  });

  it('puts the removal time on the keys as a TTL, and none for a token kept until revoked', async () => {
    const t = token();
    const forever = token({ removed_at_ms: null, refresh_token: null });
    await storeA.saveToken(t);
    await storeA.saveToken(forever);
    const ttl = await a.pttl(`${prefix}oauth2:access:${t.access_token}`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await a.pttl(`${prefix}oauth2:refresh:${t.refresh_token}`)).toBeGreaterThan(50_000);
    expect(await a.pttl(`${prefix}oauth2:access:${forever.access_token}`)).toBe(-1);
  });

  it('forgets a token when its TTL runs out', async () => {
    const t = token({ removed_at_ms: Date.now() + 50 });
    await storeA.saveToken(t);
    await new Promise((r) => setTimeout(r, 120));
    expect(await storeB.findByAccessToken(t.access_token)).toBeNull();
    expect(await storeB.findByRefreshToken(t.refresh_token!)).toBeNull();
  });

  it('revokes a token once across connections, refresh token included', async () => {
    const t = token();
    await storeA.saveToken(t);
    const results = await Promise.all([storeA.revoke(t.id), storeB.revoke(t.id), storeA.revoke(t.id)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await storeB.findByAccessToken(t.access_token)).toBeNull();
    expect(await storeB.findByRefreshToken(t.refresh_token!)).toBeNull();
    expect(await storeB.findById(t.id)).toBeNull();
  });

  it('does not drop a reused refresh token that already points at the newer token', async () => {
    const first = token();
    const second = token({ refresh_token: first.refresh_token });
    await storeA.saveToken(first);
    await storeA.saveToken(second);
    await storeB.revoke(first.id);
    expect((await storeB.findByRefreshToken(first.refresh_token!))!.id).toBe(second.id);
  });

  it('consumes a code once across connections', async () => {
    await storeA.saveCode(code('code-1'), 300);
    expect(await storeB.findCode('code-1')).toEqual(code('code-1'));
    const results = await Promise.all([storeA.consumeCode('code-1'), storeB.consumeCode('code-1')]);
    expect(results.sort()).toEqual([false, true]);
    expect(await storeA.findCode('code-1')).toBeNull();
    expect(await a.pttl(`${prefix}oauth2:code:code-1`)).toBe(-2);
  });

  it('lists live tokens in pages and prunes revoked ones from the listing', async () => {
    const isolated = new RedisTokenStore(a, `${prefix}list:`);
    const now = Date.now();
    const tokens = [token({ removed_at_ms: now + 30_000 }), token({ removed_at_ms: now + 10_000 }), token({ removed_at_ms: null }), token({ removed_at_ms: now + 20_000 })];
    for (const t of tokens) await isolated.saveToken(t);
    await isolated.revoke(tokens[3]!.id);
    const first = await isolated.listTokens({ size: 2 });
    expect(first.data.map((t) => t.id)).toEqual([tokens[1]!.id, tokens[0]!.id]);
    const second = await isolated.listTokens({ size: 2, after: first.next });
    expect(second.data.map((t) => t.id)).toEqual([tokens[2]!.id]);
    expect(second.next).toBeNull();
    expect(await a.zcard(`${prefix}list:index`)).toBe(3);
    await expect(isolated.listTokens({ size: 2, after: 'bogus' })).rejects.toThrow('invalid offset');
  });
});
