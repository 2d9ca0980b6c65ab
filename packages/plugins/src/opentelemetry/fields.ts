import { anyValue, fieldTag, otlp, type AttributeValue } from './proto';

const TWO_16 = 0x10000;
const TWO_32 = 0x100000000;

/** a 64-bit unsigned protobuf integer as protobufjs takes it */
export interface LongBits {
  low: number;
  high: number;
  unsigned: true;
}

// the halves `nanosOf` computed last, read at once by its callers (no object per timestamp)
let nanosLow = 0;
let nanosHigh = 0;

/**
 * Epoch milliseconds (with sub-millisecond digits) as unsigned 64-bit nanoseconds, in 32-bit halves computed with
 * whole numbers below 2^53 (no BigInt): seconds × 10^9 is split at 2^16 so no product loses a digit. The halves are
 * left in `nanosLow` and `nanosHigh`.
 */
function nanosOf(epochMs: number): void {
  const seconds = Math.floor(epochMs / 1000);
  const withinNs = Math.round((epochMs - seconds * 1000) * 1e6);
  const secondsHigh = Math.floor(seconds / TWO_16);
  // seconds × 10^9 = secondsHigh × 10^9 × 2^16 + secondsLow × 10^9
  const upper = secondsHigh * 1e9;
  const upperHigh = Math.floor(upper / TWO_16);
  const upperLow = (upper - upperHigh * TWO_16) * TWO_16;
  const lower = (seconds - secondsHigh * TWO_16) * 1e9 + withinNs;
  const lowerHigh = Math.floor(lower / TWO_32);
  let low = upperLow + (lower - lowerHigh * TWO_32);
  const carry = Math.floor(low / TWO_32);
  low -= carry * TWO_32;
  nanosLow = low | 0;
  nanosHigh = (upperHigh + lowerHigh + carry) | 0;
}

/** Epoch milliseconds (with sub-millisecond digits) as unsigned 64-bit nanoseconds, in 32-bit halves. */
export function unixNanos(epochMs: number): LongBits {
  nanosOf(epochMs);
  return { low: nanosLow, high: nanosHigh, unsigned: true };
}

/** writes epoch milliseconds as the 8 little-endian bytes of a fixed64 of nanoseconds at `at`; the offset after them */
export function writeUnixNanos(out: Buffer, at: number, epochMs: number): number {
  nanosOf(epochMs);
  const low = nanosLow;
  const high = nanosHigh;
  out[at] = low;
  out[at + 1] = low >>> 8;
  out[at + 2] = low >>> 16;
  out[at + 3] = low >>> 24;
  out[at + 4] = high;
  out[at + 5] = high >>> 8;
  out[at + 6] = high >>> 16;
  out[at + 7] = high >>> 24;
  return at + 8;
}

/** each character code's value as a hex digit, -1 for the others */
const HEX_DIGITS = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_DIGITS[digit.toString(16).charCodeAt(0)] = HEX_DIGITS[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;

/**
 * writes the `length` bytes of hex digits at `at`, as `out.write(hex, at, length, 'hex')` does (without the call
 * into the runtime): from the first pair that is not hex on, zeros
 */
export function writeHex(out: Buffer, at: number, hex: string, length: number): number {
  for (let i = 0; i < length; i++) {
    const high = hex.charCodeAt(2 * i);
    const low = hex.charCodeAt(2 * i + 1);
    const byte = high < 128 && low < 128 ? (HEX_DIGITS[high]! << 4) | HEX_DIGITS[low]! : -1;
    if (byte < 0) {
      out.fill(0, at + i, at + length);
      break;
    }
    out[at + i] = byte;
  }
  return at + length;
}

/** bytes of `value` as a protobuf varint (non-negative, below 2^32) */
export function varintLength(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** writes `value` as a protobuf varint (non-negative, below 2^32) at `at`; the offset after it */
export function writeVarint(out: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  out[at++] = value;
  return at;
}

/** writes `bytes` as a length-delimited field `tag` at `at`; the offset after it */
export function writeBytesField(out: Buffer, at: number, tag: number, bytes: Uint8Array): number {
  at = writeVarint(out, writeVarint(out, at, tag), bytes.length);
  out.set(bytes, at);
  return at + bytes.length;
}

/** the size of `bytes` as a length-delimited field `tag` */
export function bytesFieldLength(tag: number, bytes: number): number {
  return varintLength(tag) + varintLength(bytes) + bytes;
}

/** distinct values kept per attribute key (and span names kept) before new ones are encoded each time instead */
const MAX_VALUES_PER_KEY = 256;
const MAX_TEXTS = 1024;
// the keys the generated classes write for a string attribute (see `fieldTag`)
const KEY = fieldTag(otlp.KeyValue, { key: '' });
const VALUE = fieldTag(otlp.KeyValue, { value: {} });
const STRING_VALUE = fieldTag(otlp.AnyValue, { stringValue: '' });

/** the size of a string attribute's `KeyValue` message for a key and a value of these byte lengths */
export function stringKeyValueLength(keyLength: number, valueLength: number): number {
  return bytesFieldLength(KEY, keyLength) + bytesFieldLength(VALUE, bytesFieldLength(STRING_VALUE, valueLength));
}

/**
 * writes a string attribute's `KeyValue` message (its `length` UTF-8 bytes of `value`) at `at`, laid out as the
 * generated class writes it; the offset after it
 */
export function writeStringKeyValue(out: Buffer, at: number, key: Uint8Array, value: string, length: number): number {
  at = writeBytesField(out, at, KEY, key);
  at = writeVarint(out, writeVarint(out, writeVarint(out, writeVarint(out, at, VALUE), bytesFieldLength(STRING_VALUE, length)), STRING_VALUE), length);
  return at + out.write(value, at, length, 'utf8');
}

/** the last string value seen for an attribute key, with its encoded `KeyValue` message once it came twice in a row */
interface LastString {
  value: string;
  bytes: Uint8Array | null;
}

/**
 * The encoded `KeyValue` message of each attribute and the UTF-8 bytes of span names. A string attribute's message is
 * kept for the last value its key had once that value comes again: a value that repeats (a method, a host, a route's
 * URL) is compared, not hashed, and one unique to the request (a request id) is written in place by the encoder
 * (`writeStringKeyValue`), never kept. Other values (numbers, booleans, a few per key) are encoded once each by the
 * generated `KeyValue` class and their bytes reused.
 */
export class AttributeBytes {
  private readonly encoded = new Map<string, Map<AttributeValue, Uint8Array>>();
  private readonly strings = new Map<string, LastString>();
  private readonly texts = new Map<string, Uint8Array>();

  /** the UTF-8 bytes of a (span or log) name, kept while there are few */
  text(value: string): Uint8Array {
    let bytes = this.texts.get(value);
    if (bytes === undefined) {
      bytes = Buffer.from(value);
      if (this.texts.size < MAX_TEXTS) this.texts.set(value, bytes);
    }
    return bytes;
  }

  /** a number's or boolean's encoded `KeyValue` message */
  keyValue(key: string, value: number | boolean): Uint8Array {
    let values = this.encoded.get(key);
    if (values === undefined) this.encoded.set(key, (values = new Map()));
    let bytes = values.get(value);
    if (bytes !== undefined) return bytes;
    bytes = otlp.KeyValue.encode({ key, value: anyValue(key, value) }).finish();
    // a key of many values is not kept further: its values hardly repeat
    if (values.size < MAX_VALUES_PER_KEY) values.set(value, bytes);
    return bytes;
  }

  /** a string attribute's encoded `KeyValue` message when its value is the key's last one again, else null (write it in place) */
  repeatedString(key: string, value: string): Uint8Array | null {
    const last = this.strings.get(key);
    if (last === undefined) {
      if (this.strings.size < MAX_TEXTS) this.strings.set(key, { value, bytes: null });
      return null;
    }
    if (last.value !== value) {
      last.value = value;
      last.bytes = null;
      return null;
    }
    if (last.bytes === null) {
      const keyBytes = this.text(key);
      const length = Buffer.byteLength(value);
      const bytes = Buffer.allocUnsafe(stringKeyValueLength(keyBytes.length, length));
      writeStringKeyValue(bytes, 0, keyBytes, value, length);
      last.bytes = bytes;
    }
    return last.bytes;
  }
}
