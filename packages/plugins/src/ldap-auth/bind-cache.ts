import { createHash } from 'node:crypto';

/** What identifies one successful bind: the server and naming it was made against, and the credentials. */
export interface BindCacheKeyParts {
  host: string;
  port: number;
  /** how the server was reached (`ldap`, `ldaps`, `starttls`, with `+verify` when its certificate was checked): a
   * bind proven over a weaker channel does not count for a configuration that asks for a stronger one */
  transport: string;
  baseDn: string;
  attribute: string;
  username: string;
  password: string;
}

/**
 * Successful binds, remembered for `cache_ttl` seconds from the bind, so an authenticated client does not cost one
 * LDAP round trip per request. Entries are sha256 digests (no password is kept in memory); failures are never
 * remembered. Bounded: the oldest entry goes first.
 */
export class BindCache {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  static keyOf(parts: BindCacheKeyParts): string {
    return createHash('sha256')
      .update(`${parts.host}\0${parts.port}\0${parts.transport}\0${parts.baseDn}\0${parts.attribute}\0${parts.username}\0`)
      .update(parts.password)
      .digest('base64');
  }

  has(key: string): boolean {
    const expiresAt = this.expiries.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.expiries.delete(key);
    return false;
  }

  /** Remembers a successful bind for `ttlSeconds`; a ttl of 0 remembers nothing. */
  add(key: string, ttlSeconds: number): void {
    if (!(ttlSeconds > 0)) return;
    this.expiries.delete(key); // re-inserted last: the eviction order follows the most recent bind
    if (this.expiries.size >= this.maxEntries) {
      const oldest = this.expiries.keys().next().value;
      if (oldest !== undefined) this.expiries.delete(oldest);
    }
    this.expiries.set(key, this.now() + ttlSeconds * 1000);
  }

  clear(): void {
    this.expiries.clear();
  }

  get size(): number {
    return this.expiries.size;
  }
}
