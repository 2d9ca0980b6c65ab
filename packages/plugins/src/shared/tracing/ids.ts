import { randomBytes } from 'node:crypto';

/** Trace and span ids are lower-case hex strings: 16 bytes (32 digits) for a trace, 8 bytes (16 digits) for a span. */
export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

/**
 * random bytes drawn 4 KiB at a time and kept as hex digits: one id is a slice of that text (which the engine makes
 * without copying), not a call into the system's generator nor a conversion to hex per id
 */
const POOL_BYTES = 4096;
let poolHex = randomBytes(POOL_BYTES).toString('hex');
let used = 0;

/** `bytes` random bytes as lower-case hex */
export function randomId(bytes: number): string {
  if (used + bytes > POOL_BYTES) {
    poolHex = randomBytes(POOL_BYTES).toString('hex');
    used = 0;
  }
  const id = poolHex.slice(2 * used, 2 * (used + bytes));
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
