import { anyValue, otlp, type AttributeValue, type Writer } from './proto';

const TWO_16 = 0x10000;
const TWO_32 = 0x100000000;

/** a 64-bit unsigned protobuf integer as protobufjs takes it */
export interface LongBits {
  low: number;
  high: number;
  unsigned: true;
}

/**
 * Epoch milliseconds (with sub-millisecond digits) as unsigned 64-bit nanoseconds, in 32-bit halves computed with
 * whole numbers below 2^53 (no BigInt): seconds × 10^9 is split at 2^16 so no product loses a digit.
 */
export function unixNanos(epochMs: number): LongBits {
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
  return { low: low | 0, high: (upperHigh + lowerHigh + carry) | 0, unsigned: true };
}

/**
 * Trace and span ids of one batch decoded from hex into one buffer. Consecutive spans of a request share their trace
 * id and mostly their parent (the request span): a repeat of the previous one is not decoded again.
 */
export class HexIds {
  private readonly buf: Buffer;
  private used = 0;
  private lastTrace = '';
  private lastTraceBytes: Uint8Array | null = null;
  private lastParent = '';
  private lastParentBytes: Uint8Array | null = null;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  private decode(hex: string): Uint8Array {
    const start = this.used;
    this.used += this.buf.write(hex, start, hex.length >> 1, 'hex');
    return this.buf.subarray(start, this.used);
  }

  trace(hex: string): Uint8Array {
    if (hex !== this.lastTrace || this.lastTraceBytes === null) {
      this.lastTrace = hex;
      this.lastTraceBytes = this.decode(hex);
    }
    return this.lastTraceBytes;
  }

  span(hex: string): Uint8Array {
    return this.decode(hex);
  }

  parent(hex: string): Uint8Array {
    if (hex !== this.lastParent || this.lastParentBytes === null) {
      this.lastParent = hex;
      this.lastParentBytes = this.decode(hex);
    }
    return this.lastParentBytes;
  }
}

/** distinct values kept per attribute key (and span names kept) before new ones are encoded each time instead */
const MAX_VALUES_PER_KEY = 256;
const MAX_TEXTS = 1024;

/**
 * Writes attributes as repeated `KeyValue` fields (`tag`): each distinct key and value is encoded once by the
 * generated `KeyValue` class and its bytes written again afterwards. Values unique to a request (request ids, URLs)
 * stop being kept once a key has many; they are encoded each time.
 */
export class AttributeWriter {
  private readonly encoded = new Map<string, Map<AttributeValue, Uint8Array>>();
  private readonly texts = new Map<string, Uint8Array>();

  constructor(private readonly tag: number) {}

  /** the UTF-8 bytes of a (span or log) name, kept while there are few */
  text(value: string): Uint8Array {
    let bytes = this.texts.get(value);
    if (bytes === undefined) {
      bytes = Buffer.from(value);
      if (this.texts.size < MAX_TEXTS) this.texts.set(value, bytes);
    }
    return bytes;
  }

  write(w: Writer, attributes: Readonly<Record<string, AttributeValue>>): void {
    for (const key in attributes) {
      const value = attributes[key]!;
      let values = this.encoded.get(key);
      if (values === undefined) this.encoded.set(key, (values = new Map()));
      let bytes = values.get(value);
      if (bytes === undefined) {
        if (values.size >= MAX_VALUES_PER_KEY) {
          otlp.KeyValue.encode({ key, value: anyValue(key, value) }, w.uint32(this.tag).fork()).ldelim();
          continue;
        }
        bytes = otlp.KeyValue.encode({ key, value: anyValue(key, value) }).finish();
        values.set(value, bytes);
      }
      w.uint32(this.tag).bytes(bytes);
    }
  }
}
