import { availableParallelism } from 'node:os';
import { createHash, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcrypt';

/**
 * basic-auth passwords on the native `bcrypt` package: hashing and comparison run on libuv's thread pool, never on
 * the event loop, so wrong-password traffic cannot stall the proxy. Stored hashes are `$2b$` (what the control plane
 * writes); `$2a$` and `$2y$` hashes made elsewhere verify too (`$2y$` is the same algorithm under another name).
 */

/** bcrypt cost for stored passwords. */
export const PASSWORD_COST = 10;

export const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** A hash of a password nobody has, at PASSWORD_COST: what an unknown username is compared against. */
const DUMMY_HASH_AT_DEFAULT_COST = '$2b$10$4l8qJt3ObCVlHWQpeMi/gOwclj5TPlABQ4zNQKlPZundDeAZulRDO';
const DUMMY_PASSWORD = 'gatehouse-dummy-password';
const dummies = new Map<number, Promise<string>>([[PASSWORD_COST, Promise.resolve(DUMMY_HASH_AT_DEFAULT_COST)]]);

/**
 * At most this many comparisons run at once: bcrypt is CPU-bound, and libuv's pool (4 threads by default) also serves
 * DNS look-ups, file reads and zlib; more comparisons in flight would only queue there and delay those. Beyond it,
 * comparisons wait here, in order.
 */
const MAX_CONCURRENT = Math.max(1, Math.min(availableParallelism(), 2));
let running = 0;
const waiting: Array<() => void> = [];

function limited<T>(work: () => Promise<T>): Promise<T> {
  const run = (): Promise<T> => {
    running++;
    return work().finally(() => {
      running--;
      waiting.shift()?.();
    });
  };
  if (running < MAX_CONCURRENT) return run();
  return new Promise<void>((resolve) => waiting.push(resolve)).then(run);
}

function compare(given: string, hash: string): Promise<boolean> {
  return limited(() => bcrypt.compare(given, hash));
}

export function hashPassword(password: string, cost = PASSWORD_COST): Promise<string> {
  return bcrypt.hash(password, cost);
}

/** The cost a bcrypt hash was made with, or null when the value is not a bcrypt hash. */
export function costOf(stored: string): number | null {
  const m = BCRYPT_HASH.exec(stored);
  return m ? Number(m[1]) : null;
}

/** Kong's stored basic-auth digest: SHA-1 of the password followed by the consumer's id, in lowercase hex. */
export const KONG_SHA1_DIGEST = /^[0-9a-f]{40}$/;

/** Whether `given`, salted with the consumer id as Kong salts it, has Kong's stored digest (compared in constant time). */
export function matchesKongDigest(given: string, stored: string, consumerId: string): boolean {
  const digest = createHash('sha1').update(given + consumerId).digest();
  return timingSafeEqual(digest, Buffer.from(stored, 'hex'));
}

/**
 * Whether `given` is the password behind `stored`; false (after the same work) for a malformed stored hash. A stored
 * value in Kong's own format (imported with `_transform: false`) verifies as Kong does, with the consumer's id.
 */
export async function verifyPassword(given: string, stored: string, consumerId?: string): Promise<boolean> {
  if (consumerId !== undefined && KONG_SHA1_DIGEST.test(stored)) return matchesKongDigest(given, stored, consumerId);
  if (!BCRYPT_HASH.test(stored)) {
    await spendDummyWork(given, PASSWORD_COST);
    return false;
  }
  const comparable = stored.charCodeAt(2) === 121 /* y */ ? `$2b$${stored.slice(4)}` : stored;
  return compare(given, comparable);
}

/**
 * The work a known username costs, for a username that does not exist: one bcrypt comparison at `cost` (the cost
 * of the stored hashes), whose result is thrown away. Without it an unknown user answers in microseconds and a
 * known one in tens of milliseconds, telling which usernames exist.
 */
export async function spendDummyWork(given: string, cost: number): Promise<void> {
  let dummy = dummies.get(cost);
  if (dummy === undefined) {
    dummy = bcrypt.hash(DUMMY_PASSWORD, cost);
    dummies.set(cost, dummy);
  }
  await compare(given, await dummy);
}
