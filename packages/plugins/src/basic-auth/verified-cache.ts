import { createHash } from 'node:crypto';

/**
 * Remembers username/password pairs that bcrypt already accepted, so a valid request does not pay bcrypt each time.
 * Entries are sha256 digests of username, password and the stored hash (no plaintext is kept, and a changed password
 * hash can never hit an old entry). Bounded LRU: a hit makes an entry the newest, and past the cap the least recently
 * used entry goes first. One cache per compiled snapshot, so a new snapshot starts empty.
 */
export class VerifiedCredentialCache {
  private readonly entries = new Set<string>();

  constructor(private readonly maxEntries = 10_000) {}

  static keyOf(username: string, password: string, storedHash: string): string {
    return createHash('sha256').update(username).update('\0').update(password).update('\0').update(storedHash).digest('base64');
  }

  has(key: string): boolean {
    if (!this.entries.has(key)) return false;
    // a Set iterates in insertion order: re-inserting makes the entry the most recently used
    this.entries.delete(key);
    this.entries.add(key);
    return true;
  }

  add(key: string): void {
    if (this.entries.has(key)) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.values().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.add(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
