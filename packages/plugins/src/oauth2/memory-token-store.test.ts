import { describe, expect, it } from '@jest/globals';
import { MemoryTokenStore } from './memory-token-store';
import { tokenDigest as digest, type AuthorizationCode, type OAuth2Token } from './token-store';

let clock = 1_700_000_000_000;
const now = () => clock;

function token(fields: Partial<OAuth2Token> = {}): OAuth2Token {
  const n = Math.random().toString(36).slice(2);
  return {
    id: crypto.randomUUID(),
    created_at: Math.floor(clock / 1000),
    credential: { id: 'cred-1' },
    service: null,
    token_type: 'bearer',
    expires_in: 30,
    access_token_digest: digest(`at-${n}`),
    refresh_token_digest: digest(`rt-${n}`),
    authenticated_userid: null,
    scope: null,
    issued_at_ms: clock,
    refresh_expires_at_ms: clock + 60_000,
    removed_at_ms: clock + 60_000,
    ...fields,
  };
}

const code = (value: string): AuthorizationCode => ({
  code_digest: digest(value),
  created_at: 0,
  credential: { id: 'cred-1' },
  service: null,
  authenticated_userid: 'u',
  scope: null,
  challenge: null,
  challenge_method: null,
});

describe('MemoryTokenStore', () => {
  it('finds a token by the digests of its access and refresh tokens and by id, and returns copies', async () => {
    const store = new MemoryTokenStore(now);
    const t = token();
    await store.saveToken(t);
    expect(await store.findByAccessDigest(t.access_token_digest)).toEqual(t);
    expect(await store.findByRefreshDigest(t.refresh_token_digest!)).toEqual(t);
    expect(await store.findById(t.id)).toEqual(t);
    (await store.findById(t.id))!.scope = 'changed';
    expect((await store.findById(t.id))!.scope).toBeNull();
    expect(await store.findByAccessDigest(digest('nope'))).toBeNull();
  });

  it('forgets the access token when it expires, the refresh token and the record at their own ends; null keeps them', async () => {
    const store = new MemoryTokenStore(now);
    const short = token();
    const forever = token({ expires_in: 0, refresh_token_digest: null, refresh_expires_at_ms: null, removed_at_ms: null });
    await store.saveToken(short);
    await store.saveToken(forever);
    clock += 30_000;
    expect(await store.findByAccessDigest(short.access_token_digest)).toBeNull();
    expect((await store.findByRefreshDigest(short.refresh_token_digest!))!.id).toBe(short.id);
    clock += 30_000;
    expect(await store.findByRefreshDigest(short.refresh_token_digest!)).toBeNull();
    expect(await store.findById(short.id)).toBeNull();
    expect(await store.findByAccessDigest(forever.access_token_digest)).not.toBeNull();
  });

  it('revokes once: only the first caller is told it removed the token', async () => {
    const store = new MemoryTokenStore(now);
    const t = token();
    await store.saveToken(t);
    const results = await Promise.all([store.revoke(t.id), store.revoke(t.id)]);
    expect(results.sort()).toEqual([false, true]);
    expect(await store.findByAccessDigest(t.access_token_digest)).toBeNull();
    expect(await store.findByRefreshDigest(t.refresh_token_digest!)).toBeNull();
  });

  it('keeps a reused refresh token pointing at the newer token', async () => {
    const store = new MemoryTokenStore(now);
    const first = token();
    await store.saveToken(first);
    await store.revoke(first.id);
    const second = token({ refresh_token_digest: first.refresh_token_digest });
    await store.saveToken(second);
    expect((await store.findByRefreshDigest(first.refresh_token_digest!))!.id).toBe(second.id);
  });

  it('consumes a code once and lets it expire', async () => {
    const store = new MemoryTokenStore(now);
    await store.saveCode(code('c1'), 300);
    await store.saveCode(code('c2'), 300);
    expect((await store.findCode(digest('c1')))!.authenticated_userid).toBe('u');
    expect(await store.consumeCode(digest('c1'))).toBe(true);
    expect(await store.consumeCode(digest('c1'))).toBe(false);
    expect(await store.findCode(digest('c1'))).toBeNull();
    clock += 300_000;
    expect(await store.findCode(digest('c2'))).toBeNull();
    expect(await store.consumeCode(digest('c2'))).toBe(false);
  });

  it('lists live tokens in pages, soonest removal first', async () => {
    const store = new MemoryTokenStore(now);
    const tokens = [token({ removed_at_ms: clock + 3000 }), token({ removed_at_ms: clock + 1000 }), token({ removed_at_ms: null }), token({ removed_at_ms: clock + 2000 })];
    for (const t of tokens) await store.saveToken(t);
    const first = await store.listTokens({ size: 2 });
    expect(first.data.map((t) => t.id)).toEqual([tokens[1]!.id, tokens[3]!.id]);
    expect(first.next).not.toBeNull();
    const second = await store.listTokens({ size: 2, after: first.next });
    expect(second.data.map((t) => t.id)).toEqual([tokens[0]!.id, tokens[2]!.id]);
    expect(second.next).toBeNull();
    clock += 1500;
    expect((await store.listTokens({ size: 10 })).data).toHaveLength(3);
    await expect(store.listTokens({ size: 1, after: 'garbage' })).rejects.toThrow('invalid offset');
  });
});
