import type { Redis } from 'ioredis';
import { decodeCursor, encodeCursor, listingKey, listingKeyAt, type AuthorizationCode, type OAuth2Token, type TokenPage, type TokenStore } from './token-store';

/**
 * Removes a token, its id entry and its refresh entry in one step, so two data planes refreshing with the same refresh
 * token cannot both succeed. KEYS[1] = the id entry; ARGV[1] = the key prefix. Returns 1 when this call removed it.
 */
const REVOKE = `
local access = redis.call('GET', KEYS[1])
if not access then return 0 end
redis.call('DEL', KEYS[1])
local accessKey = ARGV[1] .. 'access:' .. access
local json = redis.call('GET', accessKey)
redis.call('DEL', accessKey)
if json then
  local ok, token = pcall(cjson.decode, json)
  if ok and type(token) == 'table' and type(token.refresh_token) == 'string' then
    local refreshKey = ARGV[1] .. 'refresh:' .. token.refresh_token
    if redis.call('GET', refreshKey) == access then redis.call('DEL', refreshKey) end
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

/**
 * Tokens and codes in Redis, under `prefix`: every data plane and the control plane read the same entries, so a token
 * issued through one data plane works through all of them at once. Layout:
 *   `<prefix>access:<access_token>` → the token (JSON), `<prefix>id:<id>` → access token,
 *   `<prefix>refresh:<refresh_token>` → access token, `<prefix>code:<code>` → the code (JSON),
 *   `<prefix>index` → sorted set of listing keys (for `/oauth2_tokens`; entries of removed tokens are pruned lazily).
 * Entries expire with Redis TTLs.
 */
export class RedisTokenStore implements TokenStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gatehouse:oauth2:',
  ) {}

  private key(kind: string, value: string): string {
    return `${this.prefix}${kind}:${value}`;
  }

  private get indexKey(): string {
    return `${this.prefix}index`;
  }

  async saveToken(token: OAuth2Token): Promise<void> {
    const json = JSON.stringify(token);
    const tx = this.redis.multi();
    const now = Date.now();
    if (token.removed_at_ms === null) {
      tx.set(this.key('access', token.access_token), json);
      tx.set(this.key('id', token.id), token.access_token);
      if (token.refresh_token !== null) tx.set(this.key('refresh', token.refresh_token), token.access_token);
    } else {
      const ttl = Math.max(1, token.removed_at_ms - now);
      tx.set(this.key('access', token.access_token), json, 'PX', ttl);
      tx.set(this.key('id', token.id), token.access_token, 'PX', ttl);
      if (token.refresh_token !== null) tx.set(this.key('refresh', token.refresh_token), token.access_token, 'PX', ttl);
    }
    tx.zadd(this.indexKey, 0, listingKey(token));
    tx.zremrangebylex(this.indexKey, '-', `(${listingKeyAt(now)}`);
    checkExec(await tx.exec());
  }

  async findByAccessToken(accessToken: string): Promise<OAuth2Token | null> {
    return parse<OAuth2Token>(await this.redis.get(this.key('access', accessToken)));
  }

  async findById(id: string): Promise<OAuth2Token | null> {
    const accessToken = await this.redis.get(this.key('id', id));
    if (accessToken === null) return null;
    const token = await this.findByAccessToken(accessToken);
    return token !== null && token.id === id ? token : null;
  }

  async findByRefreshToken(refreshToken: string): Promise<OAuth2Token | null> {
    const accessToken = await this.redis.get(this.key('refresh', refreshToken));
    if (accessToken === null) return null;
    const token = await this.findByAccessToken(accessToken);
    return token !== null && token.refresh_token === refreshToken ? token : null;
  }

  async revoke(id: string): Promise<boolean> {
    const removed = await this.redis.eval(REVOKE, 1, this.key('id', id), this.prefix);
    return removed === 1;
  }

  async saveCode(code: AuthorizationCode, lifetimeSeconds: number): Promise<void> {
    await this.redis.set(this.key('code', code.code), JSON.stringify(code), 'PX', Math.max(1, Math.round(lifetimeSeconds * 1000)));
  }

  async findCode(code: string): Promise<AuthorizationCode | null> {
    return parse<AuthorizationCode>(await this.redis.get(this.key('code', code)));
  }

  async consumeCode(code: string): Promise<boolean> {
    return (await this.redis.del(this.key('code', code))) === 1;
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
      const accessTokens = await this.redis.mget(ids.map((id) => this.key('id', id)));
      const present = accessTokens.filter((a): a is string => a !== null);
      const tokens = present.length > 0 ? await this.redis.mget(present.map((a) => this.key('access', a))) : [];
      const byAccess = new Map(present.map((a, i) => [a, parse<OAuth2Token>(tokens[i] ?? null)]));
      const gone: string[] = [];
      keys.forEach((key, i) => {
        const accessToken = accessTokens[i];
        const token = accessToken == null ? null : (byAccess.get(accessToken) ?? null);
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
