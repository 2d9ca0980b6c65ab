import { randomBytes } from 'node:crypto';

/** Trace and span ids are lower-case hex strings: 16 bytes (32 digits) for a trace, 8 bytes (16 digits) for a span. */
export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

/**
 * random bytes drawn 4 KiB at a time, kept as bytes and as hex digits: one id is a slice of that text (which the engine
 * makes without copying), not a call into the system's generator nor a conversion to hex per id. A pool is replaced,
 * never refilled, so the bytes an id was cut from stay what they were (see `lastIdBytes`).
 */
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let poolHex = pool.toString('hex');
let used = 0;

/** Where an id's bytes are: the pool it was cut from and their offset in it. */
export interface IdBytes {
  pool: Uint8Array;
  at: number;
}

/**
 * The bytes of the id `randomId` returned last, overwritten by its next call: an encoder that writes ids as bytes
 * copies them from there instead of reading the hex digits back.
 */
export const lastIdBytes: IdBytes = { pool, at: 0 };

/** `bytes` random bytes as lower-case hex */
export function randomId(bytes: number): string {
  if (used + bytes > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolHex = pool.toString('hex');
    used = 0;
  }
  const id = poolHex.slice(2 * used, 2 * (used + bytes));
  lastIdBytes.pool = pool;
  lastIdBytes.at = used;
  used += bytes;
  return id;
}

/** Pads with zero bytes on the left, or keeps the rightmost bytes, so the id has `bytes` bytes (Kong's `to_id_size`). */
export function toIdSize(id: string, bytes: number): string {
  const digits = bytes * 2;
  if (id.length > digits) return id.slice(-digits);
  if (id.length < digits) return id.padStart(digits, '0');
  return id;
}

/** Hex of an odd length gets a leading zero, then lower case (Kong's `from_hex`). */
export function evenHex(hex: string): string {
  return (hex.length % 2 === 1 ? `0${hex}` : hex).toLowerCase();
}

export function isHex(value: string): boolean {
  return /^[0-9a-fA-F]+$/.test(value);
}

export function isZero(hex: string): boolean {
  return /^0*$/.test(hex);
}

/** A decimal id (Datadog, GCP span ids) as hex, or null when it is not a whole number. */
export function decimalToHex(decimal: string): string | null {
  if (!/^\d+$/.test(decimal)) return null;
  return evenHex(BigInt(decimal).toString(16));
}

export function hexToDecimal(hex: string): string {
  return BigInt(`0x${hex}`).toString(10);
}
