import { accessExpiresAt, decodeCursor, encodeCursor, listingKey, type AuthorizationCode, type OAuth2Token, type TokenPage, type TokenStore } from './token-store';

interface Expiring<T> {
  value: T;
  /** epoch ms; null = never */
  until: number | null;
}

/** How many writes between sweeps of expired entries (reads skip them anyway). */
const SWEEP_EVERY = 256;

/**
 * Tokens and codes in this process's memory: the embedded mode, where the control plane and the one data plane share
 * this object. Only digests are kept, as in Redis; each entry expires by the clock given (tests move it): the access
 * entry with the access token, the refresh entry with the refresh token, the token itself when neither is valid.
 */
export class MemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, Expiring<OAuth2Token>>();
  /** access token digest → token id */
  private readonly byAccess = new Map<string, Expiring<string>>();
  /** refresh token digest → token id */
  private readonly byRefresh = new Map<string, Expiring<string>>();
  private readonly codes = new Map<string, Expiring<AuthorizationCode>>();
  private writes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private live<T>(entry: Expiring<T> | undefined): T | null {
    if (entry === undefined) return null;
    return entry.until !== null && this.now() >= entry.until ? null : entry.value;
  }

  private wrote(): void {
    if (++this.writes % SWEEP_EVERY !== 0) return;
    const now = this.now();
    for (const map of [this.tokens, this.byAccess, this.byRefresh, this.codes] as Array<Map<string, Expiring<unknown>>>) {
      for (const [key, entry] of map) if (entry.until !== null && now >= entry.until) map.delete(key);
    }
  }

  private drop(id: string, token: OAuth2Token): void {
    this.tokens.delete(id);
    if (this.byAccess.get(token.access_token_digest)?.value === id) this.byAccess.delete(token.access_token_digest);
    if (token.refresh_token_digest !== null && this.byRefresh.get(token.refresh_token_digest)?.value === id) this.byRefresh.delete(token.refresh_token_digest);
  }

  async saveToken(token: OAuth2Token): Promise<void> {
    this.tokens.set(token.id, { value: structuredClone(token), until: token.removed_at_ms });
    this.byAccess.set(token.access_token_digest, { value: token.id, until: accessExpiresAt(token) });
    if (token.refresh_token_digest !== null) this.byRefresh.set(token.refresh_token_digest, { value: token.id, until: token.refresh_expires_at_ms });
    this.wrote();
  }

  async findById(id: string): Promise<OAuth2Token | null> {
    const token = this.live(this.tokens.get(id));
    return token === null ? null : structuredClone(token);
  }

  async findByAccessDigest(digest: string): Promise<OAuth2Token | null> {
    const id = this.live(this.byAccess.get(digest));
    return id === null ? null : this.findById(id);
  }

  async findByRefreshDigest(digest: string): Promise<OAuth2Token | null> {
    const id = this.live(this.byRefresh.get(digest));
    return id === null ? null : this.findById(id);
  }

  async revoke(id: string): Promise<boolean> {
    const entry = this.tokens.get(id);
    if (entry === undefined) return false;
    this.drop(id, entry.value);
    return this.live(entry) !== null;
  }

  async saveCode(code: AuthorizationCode, lifetimeSeconds: number): Promise<void> {
    this.codes.set(code.code_digest, { value: structuredClone(code), until: this.now() + lifetimeSeconds * 1000 });
    this.wrote();
  }

  async findCode(digest: string): Promise<AuthorizationCode | null> {
    const found = this.live(this.codes.get(digest));
    return found === null ? null : structuredClone(found);
  }

  async consumeCode(digest: string): Promise<boolean> {
    const entry = this.codes.get(digest);
    if (entry === undefined) return false;
    this.codes.delete(digest);
    return this.live(entry) !== null;
  }

  async listTokens(page: { size: number; after?: string | null }): Promise<TokenPage> {
    const after = page.after ? decodeCursor(page.after) : null;
    if (page.after && after === null) throw new RangeError('invalid offset');
    const live: Array<{ key: string; token: OAuth2Token }> = [];
    for (const entry of this.tokens.values()) {
      const token = this.live(entry);
      if (token === null) continue;
      const key = listingKey(token);
      if (after === null || key > after) live.push({ key, token });
    }
    live.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const data = live.slice(0, page.size);
    const next = live.length > page.size ? encodeCursor(data[data.length - 1]!.key) : null;
    return { data: data.map((d) => structuredClone(d.token)), next };
  }
}
