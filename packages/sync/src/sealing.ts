// Sealing: what a snapshot or delta carries (credential keys, private keys) is encrypted before it is signed, so
// neither Redis nor a data plane's disk cache holds a secret in clear (decision 28). AES-256-GCM under a key derived
// from the cluster secret with HKDF, separate from the signing key (the secret itself, HMAC-SHA256). The sealed
// payload is base64(iv ‖ ciphertext ‖ tag) of the gzip-compressed JSON; it is encrypted and decrypted a slice at a
// time, so a large snapshot never needs a second native buffer of its size (see text-in-slices).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, type KeyObject, createSecretKey } from 'node:crypto';
import { SLICE_CHARS } from './text-in-slices';

/** the envelope's `cipher` of a sealed payload; an envelope without it carries the unsealed payload of earlier releases */
export const SEAL_CIPHER = 'aes-256-gcm';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** base64 characters of the iv: 12 bytes encode to 16 characters without padding */
const IV_CHARS = 16;

/**
 * The keys a node signs, verifies, seals and opens snapshots with, derived once per process from the cluster secret
 * (HKDF costs little, but nothing is derived per message).
 */
export interface SnapshotKeys {
  /** HMAC-SHA256 key of signatures: the cluster secret, as in earlier releases */
  readonly signing: string;
  /** AES-256-GCM key of payloads: HKDF-SHA256 of the secret */
  readonly sealing: KeyObject;
}

const HKDF_SALT = 'gatehouse cluster';
const HKDF_INFO = 'gatehouse snapshot sealing v1';

/** Derives the keys of a cluster secret (call once, keep the result). */
export function deriveSnapshotKeys(secret: string): SnapshotKeys {
  if (typeof secret !== 'string' || secret.length === 0) throw new Error('a non-empty cluster secret is required to sign or verify snapshots');
  const sealing = createSecretKey(Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32)));
  return Object.freeze({ signing: secret, sealing });
}

const derived = new Map<string, SnapshotKeys>();

/**
 * The keys of `secret`, derived the first time a secret is seen and kept for the process: for callers that hold the
 * secret rather than keys (tests, tools). Long-lived objects derive their own once.
 */
export function snapshotKeysOf(secretOrKeys: string | SnapshotKeys): SnapshotKeys {
  if (typeof secretOrKeys !== 'string') return secretOrKeys;
  let keys = derived.get(secretOrKeys);
  if (!keys) {
    keys = deriveSnapshotKeys(secretOrKeys);
    if (derived.size >= 16) derived.clear();
    derived.set(secretOrKeys, keys);
  }
  return keys;
}

/** Appends bytes as base64 pieces; carries up to two bytes from one piece to the next so the pieces join into one text. */
class Base64Pieces {
  readonly pieces: string[] = [];
  private carry: Buffer = Buffer.alloc(0);

  push(bytes: Buffer): void {
    const all = this.carry.length > 0 ? Buffer.concat([this.carry, bytes]) : bytes;
    const whole = all.length - (all.length % 3);
    if (whole > 0) this.pieces.push(all.toString('base64', 0, whole));
    this.carry = Buffer.from(all.subarray(whole));
  }

  end(): string {
    if (this.carry.length > 0) this.pieces.push(this.carry.toString('base64'));
    return this.pieces.join('');
  }
}

/** base64(iv ‖ AES-256-GCM(compressed) ‖ tag), encrypted a slice at a time */
export function sealCompressed(compressed: Buffer, keys: SnapshotKeys): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.sealing, iv);
  const out = new Base64Pieces();
  out.push(iv);
  for (let at = 0; at < compressed.length; at += SLICE_CHARS) out.push(cipher.update(compressed.subarray(at, at + SLICE_CHARS)));
  out.push(cipher.final());
  out.push(cipher.getAuthTag());
  return out.end();
}

/** bytes a base64 text decodes to */
function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decrypts a sealed payload a slice at a time, yielding each slice of the compressed plaintext; throws when the
 * payload is malformed or, once the last slice is out, when its tag does not match (another key, or altered bytes).
 * Callers check the signature first, so what they consume before the end was made by the control plane.
 */
export function* openSealed(payload: string, keys: SnapshotKeys): Generator<Buffer> {
  if (payload.length % 4 !== 0 || payload.length < IV_CHARS + 24 || !BASE64.test(payload.slice(-4))) throw new Error('sealed payload is malformed');
  let remaining = decodedLength(payload) - IV_BYTES - TAG_BYTES;
  if (remaining < 0) throw new Error('sealed payload is malformed');
  // the last 24 characters decode to the tag's 16 bytes and what precedes them in the same groups
  const tail = Buffer.from(payload.slice(payload.length - 24), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keys.sealing, Buffer.from(payload.slice(0, IV_CHARS), 'base64'));
  decipher.setAuthTag(tail.subarray(tail.length - TAG_BYTES));
  // a multiple of 4 base64 characters decodes on its own
  const step = SLICE_CHARS - (SLICE_CHARS % 4);
  for (let at = IV_CHARS; at < payload.length && remaining > 0; at += step) {
    const slice = Buffer.from(payload.slice(at, Math.min(at + step, payload.length)), 'base64');
    const part = slice.subarray(0, Math.min(slice.length, remaining));
    remaining -= part.length;
    const plain = decipher.update(part);
    if (plain.length > 0) yield plain;
  }
  const last = decipher.final();
  if (last.length > 0) yield last;
}

/** the whole compressed plaintext of a small sealed payload (a delta) */
export function openSealedWhole(payload: string, keys: SnapshotKeys): Buffer {
  return Buffer.concat([...openSealed(payload, keys)]);
}
