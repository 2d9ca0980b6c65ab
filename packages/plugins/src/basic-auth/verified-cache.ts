import { createHash } from 'node:crypto';

/**
 * Remembers username/password pairs that bcrypt already accepted, so a valid request does not pay bcrypt each time.
 * Entries are sha256 digests of username, password and the stored hash (no plaintext is kept, and a changed password
 * hash can never hit an old entry). Bounded LRU: a hit makes an entry the newest, and past the cap the least recently
 * used entry goes first. Entries added with their username can be forgotten by it when that credential changes or
 * goes. One cache per compiled index: an index built again starts empty.
 */
export class VerifiedCredentialCache {
  /** entry → the username it was added for ('' when none), in least recently used order */
  private readonly entries = new Map<string, string>();
  /** username → its entries */
  private readonly byUsername = new Map<string, Set<string>>();

  constructor(private readonly maxEntries = 10_000) {}

  static keyOf(username: string, password: string, storedHash: string): string {
    return createHash('sha256').update(username).update('\0').update(password).update('\0').update(storedHash).digest('base64');
  }

  has(key: string): boolean {
    const username = this.entries.get(key);
    if (username === undefined) return false;
    // a Map iterates in insertion order: re-inserting makes the entry the most recently used
    this.entries.delete(key);
    this.entries.set(key, username);
    return true;
  }

  add(key: string, username = ''): void {
    if (this.entries.has(key)) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    this.entries.set(key, username);
    if (username === '') return;
    let keys = this.byUsername.get(username);
    if (!keys) this.byUsername.set(username, (keys = new Set()));
    keys.add(key);
  }

  /** forgets every entry added for `username` */
  forget(username: string): void {
    const keys = this.byUsername.get(username);
    if (!keys) return;
    this.byUsername.delete(username);
    for (const key of keys) this.entries.delete(key);
  }

  private drop(key: string): void {
    const username = this.entries.get(key);
    this.entries.delete(key);
    if (!username) return;
    const keys = this.byUsername.get(username);
    keys?.delete(key);
    if (keys?.size === 0) this.byUsername.delete(username);
  }

  get size(): number {
    return this.entries.size;
  }
}
