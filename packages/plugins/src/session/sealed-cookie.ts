import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** What a session cookie holds, sealed: who is authenticated and the session's clock (epoch seconds). */
export interface SessionPayload {
  /** the session's id (random, base64url) */
  id: string;
  aud: string;
  sub: string | null;
  /** consumer id, credential id, authenticated groups (Kong's session data) */
  data: [string, string, string[] | null];
  /** created: the absolute timeout counts from here */
  created: number;
  /** last renewed: the rolling timeout counts from here */
  renewed: number;
  /** last used: the idling timeout counts from here */
  used: number;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

const keys = new Map<string, Buffer>();

/** The AES-256 key of a secret (its SHA-256), remembered per secret. */
function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = createHash('sha256').update(secret).digest();
    if (keys.size > 1000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/**
 * Seals a payload for a cookie with AES-256-GCM under the configured secret: base64url of IV, ciphertext and tag. The
 * cookie's name is authenticated with it, so a value cannot move between the session and the remember cookie.
 */
export function seal(payload: SessionPayload, secret: string, cookieName: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  cipher.setAAD(Buffer.from(cookieName));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** Opens a sealed cookie value; null when it was not sealed with this secret and name, or was altered. */
export function unseal(value: string, secret: string, cookieName: string): SessionPayload | null {
  const raw = Buffer.from(value, 'base64url');
  if (raw.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(cookieName));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
    const parsed: unknown = JSON.parse(plain.toString('utf8'));
    return isPayload(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isPayload(value: unknown): value is SessionPayload {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Record<string, unknown>;
  return typeof p.id === 'string' && typeof p.aud === 'string' && Array.isArray(p.data) && typeof p.created === 'number' && typeof p.renewed === 'number' && typeof p.used === 'number';
}
