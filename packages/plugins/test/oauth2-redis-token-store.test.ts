import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { SHARED_REDIS_URL, deleteRedisPrefix, uniqueRedisPrefix } from '@gatehouse/testkit';
import { oauth2TokenDigest as digest, purgeClearOAuth2Tokens, RedisTokenStore, redisTokenStore, type OAuth2AuthorizationCode, type OAuth2Token } from '../src';

/** the clear tokens of the fixtures, which the store never sees */
const clear = new Map<string, { access: string; refresh: string }>();
const accessOf = (t: OAuth2Token) => clear.get(t.id)!.access;
const refreshOf = (t: OAuth2Token) => clear.get(t.id)!.refresh;

function token(fields: Partial<OAuth2Token> = {}): OAuth2Token {
  const n = randomUUID().replaceAll('-', '');
  const now = Date.now();
  const id = randomUUID();
  clear.set(id, { access: `at${n}`, refresh: `rt${n}` });
  return {
    id,
    created_at: Math.floor(now / 1000),
    credential: { id: 'cred-1' },
    service: { id: 'svc-1' },
    token_type: 'bearer',
    expires_in: 7200,
    access_token_digest: digest(`at${n}`),
    refresh_token_digest: digest(`rt${n}`),
    authenticated_userid: 'u',
    scope: 'read',
    issued_at_ms: now,
    refresh_expires_at_ms: now + 60_000,
    removed_at_ms: now + 7_200_000,
    ...fields,
  };
}

const code = (value: string): OAuth2AuthorizationCode => ({
  code_digest: digest(value),
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
    expect(await storeB.findByAccessDigest(digest(accessOf(t)))).toEqual(t);
    expect(await storeB.findByRefreshDigest(digest(refreshOf(t)))).toEqual(t);
    expect(await storeB.findById(t.id)).toEqual(t);
    expect(await storeB.findByAccessDigest(digest('missing'))).toBeNull();
  });

  it('keeps only digests: no key name or value holds a token or a code in clear', async () => {
    const store = new RedisTokenStore(a, `${prefix}clear:`);
    const t = token();
    await store.saveToken(t);
    await store.saveCode(code('code-in-clear-0123456789'), 300);
    const keys = await a.keys(`${prefix}clear:*`);
    const values = await Promise.all(keys.map(async (k) => ((await a.type(k)) === 'string' ? await a.get(k) : (await a.zrange(k, '0', '-1')).join(' '))));
    const everything = [...keys, ...values].join('\n');
    for (const secret of [accessOf(t), refreshOf(t), 'code-in-clear-0123456789']) expect(everything).not.toContain(secret);
    expect(keys).toContain(`${prefix}clear:access:${digest(accessOf(t))}`);
  });

  it('expires the access entry with the access token, the refresh entry with the refresh token, the record with the later', async () => {
    const now = Date.now();
    const t = token({ expires_in: 30, issued_at_ms: now, refresh_expires_at_ms: now + 600_000, removed_at_ms: now + 600_000 });
    const forever = token({ expires_in: 0, refresh_token_digest: null, refresh_expires_at_ms: null, removed_at_ms: null });
    await storeA.saveToken(t);
    await storeA.saveToken(forever);
    const access = await a.pttl(`${prefix}oauth2:access:${t.access_token_digest}`);
    expect(access).toBeGreaterThan(25_000);
    expect(access).toBeLessThanOrEqual(30_000);
    const refresh = await a.pttl(`${prefix}oauth2:refresh:${t.refresh_token_digest}`);
    expect(refresh).toBeGreaterThan(590_000);
    expect(refresh).toBeLessThanOrEqual(600_000);
    expect(await a.pttl(`${prefix}oauth2:token:${t.id}`)).toBeGreaterThan(590_000);
    expect(await a.pttl(`${prefix}oauth2:access:${forever.access_token_digest}`)).toBe(-1);
    expect(await a.pttl(`${prefix}oauth2:token:${forever.id}`)).toBe(-1);
  });

  it('forgets an access token when it expires, and the refresh token when its own lifetime runs out', async () => {
    const now = Date.now() - 29_950;
    const t = token({ expires_in: 30, issued_at_ms: now, refresh_expires_at_ms: Date.now() + 60_000, removed_at_ms: Date.now() + 60_000 });
    await storeA.saveToken(t);
    const u = token({ expires_in: 30, issued_at_ms: now, refresh_expires_at_ms: Date.now() + 50, removed_at_ms: Date.now() + 50 });
    await storeA.saveToken(u);
    await new Promise((r) => setTimeout(r, 150));
    expect(await storeB.findByAccessDigest(t.access_token_digest)).toBeNull();
    expect((await storeB.findByRefreshDigest(t.refresh_token_digest!))!.id).toBe(t.id);
    expect(await storeB.findByRefreshDigest(u.refresh_token_digest!)).toBeNull();
    expect(await storeB.findById(u.id)).toBeNull();
  });

  it('revokes a token once across connections, refresh token included', async () => {
    const t = token();
    await storeA.saveToken(t);
    const results = await Promise.all([storeA.revoke(t.id), storeB.revoke(t.id), storeA.revoke(t.id)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await storeB.findByAccessDigest(t.access_token_digest)).toBeNull();
    expect(await storeB.findByRefreshDigest(t.refresh_token_digest!)).toBeNull();
    expect(await storeB.findById(t.id)).toBeNull();
  });

  it('does not drop a reused refresh token that already points at the newer token', async () => {
    const first = token();
    const second = token({ refresh_token_digest: first.refresh_token_digest });
    await storeA.saveToken(first);
    await storeA.saveToken(second);
    await storeB.revoke(first.id);
    expect((await storeB.findByRefreshDigest(first.refresh_token_digest!))!.id).toBe(second.id);
  });

  it('consumes a code once across connections', async () => {
    await storeA.saveCode(code('code-1'), 300);
    expect(await storeB.findCode(digest('code-1'))).toEqual(code('code-1'));
    const results = await Promise.all([storeA.consumeCode(digest('code-1')), storeB.consumeCode(digest('code-1'))]);
    expect(results.sort()).toEqual([false, true]);
    expect(await storeA.findCode(digest('code-1'))).toBeNull();
    expect(await a.pttl(`${prefix}oauth2:code:${digest('code-1')}`)).toBe(-2);
  });

  it('removes the entries an earlier release kept in clear, and keeps the digests', async () => {
    const deployment = `${prefix}upgrade:`;
    const store = redisTokenStore(a, deployment);
    const t = token();
    await store.saveToken(t);
    await store.saveCode(code('new-code'), 300);
    const old = `${deployment}oauth2:`;
    await a
      .multi()
      .set(`${old}access:oldAccessToken0123456789abcdef`, JSON.stringify({ id: 'x', access_token: 'oldAccessToken0123456789abcdef' }))
      .set(`${old}id:00000000-0000-4000-8000-000000000001`, 'oldAccessToken0123456789abcdef')
      .set(`${old}refresh:oldRefreshToken0123456789abcdef`, 'oldAccessToken0123456789abcdef')
      .set(`${old}code:oldCode0123456789abcdef0123456789`, '{}')
      .exec();
    expect(await purgeClearOAuth2Tokens(a, deployment)).toBe(4);
    const left = (await a.keys(`${old}*`)).sort();
    expect(left).toEqual(
      [`${old}access:${t.access_token_digest}`, `${old}refresh:${t.refresh_token_digest}`, `${old}token:${t.id}`, `${old}code:${digest('new-code')}`, `${old}index`].sort(),
    );
    expect((await store.findByAccessDigest(t.access_token_digest))!.id).toBe(t.id);
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
