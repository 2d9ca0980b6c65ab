import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { compare as bcryptCompare } from 'bcryptjs';

/**
 * Client secrets stored with `hash_secret: true`. Ours are scrypt hashes (built into Node, salted, memory-hard) in a
 * PHC-like string: `$scrypt$ln=14,r=8,p=1$<salt base64>$<hash base64>`. bcrypt hashes (`$2a$`, `$2b$`, `$2y$`) are
 * verified too, so a secret hashed elsewhere can be imported as it is.
 */

const SCRYPT_PREFIX = '$scrypt$';
const SCRYPT_HASH = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;
const COST_LOG2 = 14;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;

function scrypt(secret: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(secret, salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))));
}

const memoryFor = (N: number, r: number) => 256 * N * r;

export function isHashedSecret(value: unknown): value is string {
  return typeof value === 'string' && (SCRYPT_HASH.test(value) || BCRYPT_HASH.test(value));
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** COST_LOG2;
  const key = await scrypt(secret, salt, KEY_LENGTH, { N, r: BLOCK_SIZE, p: PARALLELISM, maxmem: memoryFor(N, BLOCK_SIZE) });
  return `${SCRYPT_PREFIX}ln=${COST_LOG2},r=${BLOCK_SIZE},p=${PARALLELISM}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether `given` is the secret behind `stored` (a hash); false for anything that is not a hash we know. */
export async function verifyHashedSecret(given: string, stored: string): Promise<boolean> {
  if (BCRYPT_HASH.test(stored)) return bcryptCompare(given, stored);
  const m = SCRYPT_HASH.exec(stored);
  if (!m) return false;
  const [, ln, r, p, salt, hash] = m;
  const N = 2 ** Number(ln);
  const expected = Buffer.from(hash!, 'base64');
  if (expected.length === 0 || Number(ln) > 20) return false;
  const key = await scrypt(given, Buffer.from(salt!, 'base64'), expected.length, { N, r: Number(r), p: Number(p), maxmem: memoryFor(N, Number(r)) * 2 });
  return timingSafeEqual(key, expected);
}

/** Constant-time comparison of two plain strings. */
export function sameSecret(given: string, stored: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(stored, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
