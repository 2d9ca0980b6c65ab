import { NO_ATTRIBUTES, type DrawnTraceId, type RecordedSpan } from '../shared/tracing/request-spans';
import { AttributeBytes, stringKeyValueLength, writeBytesField, writeHex, writeStringKeyValue, writeUnixNanos, writeVarint } from './fields';
import { fieldTag, otlp } from './proto';

// the keys the generated classes write, read from their own encodings (see `fieldTag`)
const EMPTY = new Uint8Array(0);
const T = {
  span: fieldTag(otlp.ScopeSpans, { spans: [{}] }),
  traceId: fieldTag(otlp.Span, { traceId: EMPTY }),
  spanId: fieldTag(otlp.Span, { spanId: EMPTY }),
  parentSpanId: fieldTag(otlp.Span, { parentSpanId: EMPTY }),
  name: fieldTag(otlp.Span, { name: '' }),
  kind: fieldTag(otlp.Span, { kind: 0 }),
  start: fieldTag(otlp.Span, { startTimeUnixNano: 0 }),
  end: fieldTag(otlp.Span, { endTimeUnixNano: 0 }),
  attribute: fieldTag(otlp.Span, { attributes: [{}] }),
  status: fieldTag(otlp.Span, { status: {} }),
};
/** a span's `Status` message per code (unset, ok, error), encoded once */
const STATUS = [0, 1, 2].map((code) => otlp.Status.encode({ code }).finish());
const FIXED64 = 8;

/** the bytes of a hex id (its whole digit pairs, as `Buffer.from(hex, 'hex')`) */
const idLength = (hex: string): number => hex.length >>> 1;

function writeId(out: Buffer, at: number, tag: number, hex: string): number {
  const length = idLength(hex);
  return writeHex(out, writeVarint(out, writeVarint(out, at, tag), length), hex, length);
}

/** copies `length` bytes from `from` at `fromAt` to `out` at `at` (ids: fewer bytes than a native copy's call costs) */
function copyBytes(out: Uint8Array, at: number, from: Uint8Array, fromAt: number, length: number): void {
  for (let k = 0; k < length; k++) out[at + k] = from[fromAt + k]!;
}

/** writes a span's id bytes at `at`: copied from the random pool it was drawn from when known, else read from its hex */
function writeSpanIdBytes(out: Buffer, at: number, span: RecordedSpan, length: number): number {
  const pool = span.idPool;
  if (pool != null && span.spanId.length === SPAN_HEX) copyBytes(out, at, pool, span.idAt!, length);
  else writeHex(out, at, span.spanId, length);
  return at + length;
}

/** writes the trace id's bytes at `at`: copied from the pool the request drew it from when it is that id, else from its hex */
function writeTraceIdBytes(out: Buffer, at: number, traceId: string, drawn: DrawnTraceId | null, length: number): number {
  if (drawn !== null && drawn.drawnTraceId === traceId) copyBytes(out, at, drawn.traceIdPool, drawn.traceIdAt, length);
  else writeHex(out, at, traceId, length);
  return at + length;
}

/** writes an id field whose bytes were written before at `from` (the same id again): a copy, not a decode */
function copyId(out: Buffer, at: number, tag: number, from: number, length: number): number {
  at = writeVarint(out, writeVarint(out, at, tag), length);
  copyBytes(out, at, out, from, length);
  return at + length;
}

function writeFixed64(out: Buffer, at: number, tag: number, epochMs: number): number {
  return writeUnixNanos(out, writeVarint(out, at, tag), epochMs);
}

/** the sizes of the ids a template span has: Kong's 16-byte trace ids and 8-byte span ids, as hex digits */
const TRACE_HEX = 32;
const SPAN_HEX = 16;

/**
 * The bytes of a span without attributes (the router's and plugin phases' spans) for one name, kind, status and
 * parent presence: everything but the ids and times is the same for every request, so the chunk is written once with
 * zero ids and times and copied per request, the ids and times then written at the offsets below.
 */
interface SpanTemplate {
  bytes: Buffer;
  traceAt: number;
  spanAt: number;
  /** -1 when the span has no parent */
  parentAt: number;
  startAt: number;
  endAt: number;
}

/** where the variable parts of the span just written went (set by `SpanEncoder.write`, read for templates) */
interface WrittenOffsets {
  traceAt: number;
  spanAt: number;
  parentAt: number;
  startAt: number;
  endAt: number;
}

const ZERO_TRACE = '0'.repeat(TRACE_HEX);
const ZERO_SPAN = '0'.repeat(SPAN_HEX);
/** template spans kept (distinct names by kind, status and parent presence) before others are encoded field by field */
const MAX_TEMPLATES = 1024;

/** room kept before a span's message for its key (one byte) and its length (a varint of up to five) */
const SPAN_HEAD_ROOM = 6;
/** the most the fields of a span other than its ids, name and attributes take: the keys and lengths, kind, times, status */
const SPAN_FIXED_BOUND = 64;
/**
 * A request's encoded spans are a few hundred bytes to a few KiB: they are written one request after another in
 * blocks of this size, and each request's chunks are a view of its block (freed once none of its requests is queued
 * any more): one block for tens of requests, and no copy.
 */
const SLAB_BYTES = 64 * 1024;


/**
 * Encodes a request's spans, when the request ends, as the `spans` fields of an OTLP `ScopeSpans` message: one chunk
 * per span (its key, length and `Span` message), written straight from the span's record in the generated classes'
 * field order, in one pass: a span's message is written after room for its key and length, which are written once
 * it is done and the message moved up against them. Attributes and names come from `AttributeBytes` (a string value
 * that is not a repeat is written in place); a span without attributes is a copy of its template (see
 * `SpanTemplate`) with its ids and times written in. The request's chunks follow one another in one buffer: the one
 * entry the export queue holds for the request (its bytes, not the request's objects, counted as its spans), and a
 * batch is such buffers one after another under the resource and scope (`TraceEncoder`, trace-batch.ts): the bytes
 * `ExportTraceServiceRequest.encode` makes of the same spans.
 */
export class SpanEncoder {
  private readonly attributes = new AttributeBytes();
  /** templates by span name, then by kind, status and parent presence (`templateSlot`) */
  private readonly byName = new Map<string, Array<SpanTemplate | undefined>>();
  private templateCount = 0;
  private readonly written: WrittenOffsets = { traceAt: 0, spanAt: 0, parentAt: -1, startAt: 0, endAt: 0 };
  /** the memory requests' chunks are written in, one request's after another's (see `SLAB_BYTES`) */
  private block = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private used = 0;
  /** where the request being written wanted to go past the block's end */
  private wanted = 0;

  /** `drawn`: the request's drawn trace id, whose bytes are copied when `traceId` is it */
  encode(traceId: string, spans: readonly RecordedSpan[], drawn: DrawnTraceId | null = null): Uint8Array {
    for (;;) {
      const from = this.used;
      const end = this.encodeAt(from, traceId, spans, drawn);
      if (end >= 0) {
        this.used = end;
        return this.block.subarray(from, end);
      }
      // the rest of the block is too small for the request: it is written again in a new block (one of its own size
      // for a request of more than a block)
      this.block = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, 2 * (this.wanted - from)));
      this.used = 0;
    }
  }

  /** writes a request's chunks at `at` in the block; the offset after them, or -1 when the block ends before */
  private encodeAt(at: number, traceId: string, spans: readonly RecordedSpan[], drawn: DrawnTraceId | null): number {
    const standardTrace = traceId.length === TRACE_HEX;
    // the trace id, and the root's span id (the others' parent), are written once and copied for the other spans
    const traceLength = idLength(traceId);
    let traceAt = -1;
    const rootId = spans[0]?.spanId;
    const rootLength = rootId === undefined ? 0 : idLength(rootId);
    let rootAt = -1;
    const written = this.written;
    for (let i = 0; i < spans.length; i++) {
      const span = spans[i]!;
      const template = standardTrace ? this.templateOf(span) : null;
      if (template === null) {
        at = this.write(at, traceId, span, traceAt, rootId, rootAt, drawn);
        if (at < 0) return -1;
        if (traceAt < 0) traceAt = written.traceAt;
        if (i === 0) rootAt = written.spanAt;
        continue;
      }
      const start = at;
      const out = this.room(start, template.bytes.length);
      if (out === null) return -1;
      out.set(template.bytes, start);
      at = start + template.bytes.length;
      if (traceAt < 0) {
        traceAt = start + template.traceAt;
        writeTraceIdBytes(out, traceAt, traceId, drawn, traceLength);
      } else copyBytes(out, start + template.traceAt, out, traceAt, traceLength);
      writeSpanIdBytes(out, start + template.spanAt, span, SPAN_HEX >>> 1);
      if (i === 0) rootAt = start + template.spanAt;
      if (template.parentAt >= 0) {
        if (span.parentId === rootId && rootAt >= 0) copyBytes(out, start + template.parentAt, out, rootAt, rootLength);
        else writeHex(out, start + template.parentAt, span.parentId!, SPAN_HEX >>> 1);
      }
      writeUnixNanos(out, start + template.startAt, span.startMs);
      writeUnixNanos(out, start + template.endAt, span.endMs ?? span.startMs);
    }
    return at;
  }

  /** the block when it has room for `size` bytes at `at`, else null (and where the bytes would have ended, in `wanted`) */
  private room(at: number, size: number): Buffer | null {
    if (at + size <= this.block.length) return this.block;
    this.wanted = at + size;
    return null;
  }

  /**
   * writes one span's chunk field by field at `at`; the trace id is copied from `traceAt` when that is set, the
   * parent from `rootAt` when it is the root. The offsets of the variable parts are left in `written`. The offset
   * after the chunk, or -1 when the block ends before it.
   */
  private write(at: number, traceId: string, span: RecordedSpan, traceAt: number, rootId: string | undefined, rootAt: number, drawn: DrawnTraceId | null): number {
    const written = this.written;
    const name = this.attributes.text(span.name);
    const traceLength = idLength(traceId);
    const spanLength = idLength(span.spanId);
    const parentLength = span.parentId === null ? 0 : idLength(span.parentId);
    let out = this.room(at, SPAN_HEAD_ROOM + SPAN_FIXED_BOUND + traceLength + spanLength + parentLength + name.length);
    if (out === null) return -1;
    const start = at;
    at += SPAN_HEAD_ROOM;
    at = writeVarint(out, writeVarint(out, at, T.traceId), traceLength);
    if (traceAt < 0) at = writeTraceIdBytes(out, at, traceId, drawn, traceLength);
    else {
      copyBytes(out, at, out, traceAt, traceLength);
      at += traceLength;
    }
    written.traceAt = at - traceLength;
    at = writeSpanIdBytes(out, writeVarint(out, writeVarint(out, at, T.spanId), spanLength), span, spanLength);
    written.spanAt = at - spanLength;
    written.parentAt = -1;
    if (span.parentId !== null) {
      at = span.parentId === rootId && rootAt >= 0 ? copyId(out, at, T.parentSpanId, rootAt, parentLength) : writeId(out, at, T.parentSpanId, span.parentId);
      written.parentAt = at - parentLength;
    }
    at = writeBytesField(out, at, T.name, name);
    // the API's kinds (internal 0, server 1, client 2) are OTLP's less one
    at = writeVarint(out, writeVarint(out, at, T.kind), span.kind + 1);
    at = writeFixed64(out, at, T.start, span.startMs);
    written.startAt = at - FIXED64;
    at = writeFixed64(out, at, T.end, span.endMs ?? span.startMs);
    written.endAt = at - FIXED64;
    const attributes = span.attributes;
    for (const key in attributes) {
      const value = attributes[key]!;
      const bytes = typeof value === 'string' ? this.attributes.repeatedString(key, value) : this.attributes.keyValue(key, value);
      if (bytes !== null) {
        out = this.room(at, bytes.length + SPAN_HEAD_ROOM);
        if (out === null) return -1;
        at = writeBytesField(out, at, T.attribute, bytes);
      } else {
        const keyBytes = this.attributes.text(key);
        const length = Buffer.byteLength(value as string);
        const size = stringKeyValueLength(keyBytes.length, length);
        out = this.room(at, size + SPAN_HEAD_ROOM);
        if (out === null) return -1;
        at = writeStringKeyValue(out, writeVarint(out, writeVarint(out, at, T.attribute), size), keyBytes, value as string, length);
      }
    }
    out = this.room(at, SPAN_FIXED_BOUND);
    if (out === null) return -1;
    at = writeBytesField(out, at, T.status, STATUS[span.status]!);
    // the key and length go before the message, which moves up against them
    const message = start + SPAN_HEAD_ROOM;
    const head = writeVarint(out, writeVarint(out, start, T.span), at - message);
    const shift = message - head;
    out.copyWithin(head, message, at);
    written.traceAt -= shift;
    written.spanAt -= shift;
    if (written.parentAt >= 0) written.parentAt -= shift;
    written.startAt -= shift;
    written.endAt -= shift;
    return at - shift;
  }

  /** the template of a span without attributes and with ids of the usual sizes, made on first sight; else null */
  private templateOf(span: RecordedSpan): SpanTemplate | null {
    if (span.attributes !== NO_ATTRIBUTES || span.spanId.length !== SPAN_HEX || (span.parentId !== null && span.parentId.length !== SPAN_HEX)) return null;
    let slots = this.byName.get(span.name);
    const slot = templateSlot(span);
    const known = slots?.[slot];
    if (known !== undefined) return known;
    if (this.templateCount >= MAX_TEMPLATES) return null;
    if (slots === undefined) this.byName.set(span.name, (slots = []));
    const template = this.makeTemplate(span);
    slots[slot] = template;
    this.templateCount++;
    return template;
  }

  /** writes the span with zero ids and times in memory of its own (the block set aside meanwhile) */
  private makeTemplate(span: RecordedSpan): SpanTemplate {
    const blank: RecordedSpan = { ...span, spanId: ZERO_SPAN, parentId: span.parentId === null ? null : ZERO_SPAN, startMs: 0, endMs: 0, idPool: null };
    const block = this.block;
    this.block = Buffer.alloc(SPAN_HEAD_ROOM + SPAN_FIXED_BOUND + 4 * SPAN_HEX + Buffer.byteLength(span.name));
    const end = this.write(0, ZERO_TRACE, blank, -1, undefined, -1, null);
    const bytes = this.block.subarray(0, end);
    this.block = block;
    const { traceAt, spanAt, parentAt, startAt, endAt } = this.written;
    return { bytes, traceAt, spanAt, parentAt, startAt, endAt };
  }

}

/** a template's place among its name's: by kind (0–2), status (0 or 2) and whether it has a parent */
function templateSlot(span: RecordedSpan): number {
  return (span.kind * 3 + span.status) * 2 + (span.parentId === null ? 0 : 1);
}
