/**
 * RBAC user tokens: how a token is stored (bcrypt), how candidates are found without scanning (the ident), and how
 * a presented token is verified. Plain tokens never leave this module except as the return value of generateToken.
 */
import { createHash, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';

/** Kong's cost: `$2b$09$…`. */
export const BCRYPT_COST = 9;

/** Kong removes all whitespace from a token before hashing it (and before comparing a presented one). */
export function normalizeToken(token: string): string {
  return token.replace(/\s+/g, '');
}

/** The first 5 hex characters of SHA-1(token): a short, non-secret bucket key to find candidate users. */
export function tokenIdent(token: string): string {
  return createHash('sha1').update(normalizeToken(token)).digest('hex').slice(0, 5);
}

export async function hashToken(token: string): Promise<string> {
  return bcrypt.hash(normalizeToken(token), BCRYPT_COST);
}

/** bcrypt's own comparison (constant-time over the digest). A malformed stored hash is a mismatch, not a crash. */
export async function verifyToken(token: string, storedHash: string): Promise<boolean> {
  if (!storedHash.startsWith('$2')) return false;
  try {
    return await bcrypt.compare(normalizeToken(token), storedHash);
  } catch {
    return false;
  }
}

/** A new random token: 32 URL-safe characters (192 bits). */
export function generateToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The cache key for a presented token: its sha256, so the cache never holds a plain token. */
export function tokenCacheKey(token: string): string {
  return createHash('sha256').update(normalizeToken(token)).digest('hex');
}
