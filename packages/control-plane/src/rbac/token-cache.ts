/**
 * Remembers successful token checks for a short time so admin requests do not each pay a bcrypt comparison.
 * An entry holds the user id and the stored hash the token was verified against: the caller still loads the user on
 * every request and uses the entry only while that user's stored hash is unchanged, so a token change on any replica
 * invalidates it at once. Failures are never cached.
 */
export interface CachedCheck {
  userId: string;
  storedHash: string;
}

export class TokenCache {
  private readonly entries = new Map<string, CachedCheck & { expires: number }>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): CachedCheck | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return { userId: hit.userId, storedHash: hit.storedHash };
  }

  set(key: string, value: CachedCheck): void {
    if (this.entries.size >= this.maxEntries) {
      // Map keeps insertion order: drop the oldest entry
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { ...value, expires: this.now() + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
