import type { RedisClient } from '../contract';
import { deleteMatching } from '../shared/redis-scan';
import { accessExpiresAt, decodeCursor, encodeCursor, listingKey, listingKeyAt, type AuthorizationCode, type OAuth2Token, type TokenPage, type TokenStore } from './token-store';

/**
 * Removes a token, its access entry and its refresh entry in one step, so two data planes refreshing with the same
 * refresh token cannot both succeed. KEYS[1] = the token's entry; ARGV[1] = the key prefix, ARGV[2] = the id.
 * Returns 1 when this call removed it.
 */
const REVOKE = `
local json = redis.call('GET', KEYS[1])
if not json then return 0 end
redis.call('DEL', KEYS[1])
local ok, token = pcall(cjson.decode, json)
if ok and type(token) == 'table' then
  for _, entry in ipairs({ { 'access:', token.access_token_digest }, { 'refresh:', token.refresh_token_digest } }) do
    if type(entry[2]) == 'string' then
      local key = ARGV[1] .. entry[1] .. entry[2]
      if redis.call('GET', key) == ARGV[2] then redis.call('DEL', key) end
    end
  end
end
return 1
`;

function parse<T>(json: string | null): T | null {
  if (json === null) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
}

function checkExec(results: Array<[Error | null, unknown]> | null): void {
  if (results === null) throw new Error('redis transaction aborted');
  for (const [err] of results) if (err) throw err;
}

/** milliseconds left until `at`, at least 1; null for never */
function ttlUntil(at: number | null, now: number): number | null {
  return at === null ? null : Math.max(1, at - now);
}

/**
 * Tokens and codes in Redis, under `prefix`: every data plane and the control plane read the same entries, so a token
 * issued through one data plane works through all of them at once. Only digests are kept (see `tokenDigest`). Layout:
 *   `<prefix>token:<id>` → the token (JSON), until neither of its tokens is valid;
 *   `<prefix>access:<digest>` → id, until the access token expires (`expires_in`);
 *   `<prefix>refresh:<digest>` → id, until the refresh token expires (`refresh_token_ttl`);
 *   `<prefix>code:<digest>` → the authorization code (JSON), for its lifetime;
 *   `<prefix>index` → sorted set of listing keys (for `/oauth2_tokens`; entries of removed tokens are pruned lazily).
 * Entries expire with Redis TTLs; one without an end (a token that never expires) stays until revoked.
 */
export class RedisTokenStore implements TokenStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'gatehouse:oauth2:',
  ) {}

  private key(kind: string, value: string): string {
    return `${this.prefix}${kind}:${value}`;
  }

  private get indexKey(): string {
    return `${this.prefix}index`;
  }

  async saveToken(token: OAuth2Token): Promise<void> {
    const tx = this.redis.multi();
    const now = Date.now();
    const put = (key: string, value: string, ttl: number | null) => (ttl === null ? tx.set(key, value) : tx.set(key, value, 'PX', ttl));
    put(this.key('token', token.id), JSON.stringify(token), ttlUntil(token.removed_at_ms, now));
    put(this.key('access', token.access_token_digest), token.id, ttlUntil(accessExpiresAt(token), now));
    if (token.refresh_token_digest !== null) put(this.key('refresh', token.refresh_token_digest), token.id, ttlUntil(token.refresh_expires_at_ms, now));
    tx.zadd(this.indexKey, 0, listingKey(token));
    tx.zremrangebylex(this.indexKey, '-', `(${listingKeyAt(now)}`);
    checkExec(await tx.exec());
  }

  async findById(id: string): Promise<OAuth2Token | null> {
    const token = parse<OAuth2Token>(await this.redis.get(this.key('token', id)));
    return token !== null && token.id === id ? token : null;
  }

  async findByAccessDigest(digest: string): Promise<OAuth2Token | null> {
    const id = await this.redis.get(this.key('access', digest));
    if (id === null) return null;
    const token = await this.findById(id);
    return token !== null && token.access_token_digest === digest ? token : null;
  }

  async findByRefreshDigest(digest: string): Promise<OAuth2Token | null> {
    const id = await this.redis.get(this.key('refresh', digest));
    if (id === null) return null;
    const token = await this.findById(id);
    return token !== null && token.refresh_token_digest === digest ? token : null;
  }

  async revoke(id: string): Promise<boolean> {
    const removed = await this.redis.eval(REVOKE, 1, this.key('token', id), this.prefix, id);
    return removed === 1;
  }

  async saveCode(code: AuthorizationCode, lifetimeSeconds: number): Promise<void> {
    await this.redis.set(this.key('code', code.code_digest), JSON.stringify(code), 'PX', Math.max(1, Math.round(lifetimeSeconds * 1000)));
  }

  async findCode(digest: string): Promise<AuthorizationCode | null> {
    return parse<AuthorizationCode>(await this.redis.get(this.key('code', digest)));
  }

  async consumeCode(digest: string): Promise<boolean> {
    return (await this.redis.del(this.key('code', digest))) === 1;
  }

  async listTokens(page: { size: number; after?: string | null }): Promise<TokenPage> {
    let after = page.after ? decodeCursor(page.after) : null;
    if (page.after && after === null) throw new RangeError('invalid offset');
    await this.redis.zremrangebylex(this.indexKey, '-', `(${listingKeyAt(Date.now())}`);
    const found: Array<{ key: string; token: OAuth2Token }> = [];
    const wanted = page.size + 1;
    for (;;) {
      const batch = Math.max(wanted - found.length, 16);
      const keys = await this.redis.zrangebylex(this.indexKey, after === null ? '-' : `(${after}`, '+', 'LIMIT', 0, batch);
      if (keys.length === 0) break;
      const ids = keys.map((k) => k.slice(k.indexOf(':') + 1));
      const tokens = await this.redis.mget(ids.map((id) => this.key('token', id)));
      const gone: string[] = [];
      keys.forEach((key, i) => {
        const token = parse<OAuth2Token>(tokens[i] ?? null);
        if (token === null || token.id !== ids[i]) gone.push(key);
        else if (found.length < wanted) found.push({ key, token });
      });
      if (gone.length > 0) await this.redis.zrem(this.indexKey, ...gone);
      after = keys[keys.length - 1]!;
      if (found.length >= wanted || keys.length < batch) break;
    }
    const data = found.slice(0, page.size);
    const next = found.length > page.size ? encodeCursor(data[data.length - 1]!.key) : null;
    return { data: data.map((d) => d.token), next };
  }
}

const DIGEST_KEY = /:(access|refresh|code):[0-9a-f]{64}$/;

/**
 * Removes what the release before digests kept in clear under the oauth2 prefix (`id:<id>`, and `access:`, `refresh:`
 * and `code:` entries named by the token itself), so that reading Redis reveals no token. Tokens issued by that release
 * stop working: their clients ask for new ones. Returns how many keys were removed.
 */
export async function purgeClearTokens(redis: RedisClient, prefix: string): Promise<number> {
  let removed = 0;
  for (const family of ['id', 'access', 'refresh', 'code']) {
    removed += await deleteMatching(redis, `${prefix}${family}:*`, (key) => family !== 'id' && DIGEST_KEY.test(key));
  }
  return removed;
}
