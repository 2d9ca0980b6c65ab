import type { RecordedSpan } from '../shared/tracing/request-spans';
import { AttributeBytes, bytesFieldLength, varintLength, writeBytesField, writeHex, writeUnixNanos, writeVarint } from './fields';
import { fieldTag, KONG_SCOPE, otlp } from './proto';

// the keys the generated classes write, read from their own encodings (see `fieldTag`)
const EMPTY = new Uint8Array(0);
const T = {
  resourceSpans: fieldTag(otlp.ExportTraceServiceRequest, { resourceSpans: [{}] }),
  resource: fieldTag(otlp.ResourceSpans, { resource: {} }),
  scopeSpans: fieldTag(otlp.ResourceSpans, { scopeSpans: [{}] }),
  scope: fieldTag(otlp.ScopeSpans, { scope: {} }),
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
/** batch bodies get memory of at least this size, kept (up to SPARE_BUFFERS of them) once given back */
const SPARE_MIN_BYTES = 16 * 1024;
const SPARE_BUFFERS = 4;

/** the bytes of a hex id (its whole digit pairs, as `Buffer.from(hex, 'hex')`) */
const idLength = (hex: string): number => hex.length >>> 1;

function writeId(out: Buffer, at: number, tag: number, hex: string): number {
  const length = idLength(hex);
  return writeHex(out, writeVarint(out, writeVarint(out, at, tag), length), hex, length);
}

/** writes an id field whose bytes were written before at `from` (the same id again): a copy, not a decode */
function copyId(out: Buffer, at: number, tag: number, from: number, length: number): number {
  at = writeVarint(out, writeVarint(out, at, tag), length);
  for (let k = 0; k < length; k++) out[at + k] = out[from + k]!;
  return at + length;
}

function writeFixed64(out: Buffer, at: number, tag: number, epochMs: number): number {
  return writeUnixNanos(out, writeVarint(out, at, tag), epochMs);
}

/**
 * Encodes a request's spans, when the request ends, as the `spans` fields of an OTLP `ScopeSpans` message: one chunk
 * per span (its key, length and `Span` message), written straight from the span's record in the generated classes'
 * field order. Attributes and names come from `AttributeBytes`; all the request's chunks share one buffer. The chunks
 * are what the export queue holds (a few bytes each, not the request's objects), and a batch is their concatenation
 * under the resource and scope (`TraceEncoder`): the bytes `ExportTraceServiceRequest.encode` makes of the same spans.
 */
export class SpanEncoder {
  private readonly attributes = new AttributeBytes();
  /** of the request being encoded: each span's name bytes and attributes' messages in order, and per span its message's size and attribute count */
  private readonly pieces: Uint8Array[] = [];
  private readonly sizes: number[] = [];
  private readonly counts: number[] = [];

  encode(traceId: string, spans: readonly RecordedSpan[]): Uint8Array[] {
    const pieces = this.pieces;
    pieces.length = 0;
    let total = 0;
    for (let i = 0; i < spans.length; i++) {
      const size = this.measure(traceId, spans[i]!, i);
      this.sizes[i] = size;
      total += bytesFieldLength(T.span, size);
    }
    const out = Buffer.allocUnsafe(total);
    const chunks: Uint8Array[] = [];
    let at = 0;
    let piece = 0;
    // the trace id, and the root's span id (the others' parent), are decoded once and copied for the other spans
    const traceLength = idLength(traceId);
    let traceAt = -1;
    const rootId = spans[0]?.spanId;
    let rootAt = -1;
    for (let i = 0; i < spans.length; i++) {
      const start = at;
      at = writeVarint(out, writeVarint(out, at, T.span), this.sizes[i]!);
      const span = spans[i]!;
      if (traceAt < 0) {
        at = writeId(out, at, T.traceId, traceId);
        traceAt = at - traceLength;
      } else at = copyId(out, at, T.traceId, traceAt, traceLength);
      at = writeId(out, at, T.spanId, span.spanId);
      if (i === 0) rootAt = at - idLength(span.spanId);
      if (span.parentId !== null) at = span.parentId === rootId ? copyId(out, at, T.parentSpanId, rootAt, idLength(rootId)) : writeId(out, at, T.parentSpanId, span.parentId);
      at = writeBytesField(out, at, T.name, pieces[piece++]!);
      // the API's kinds (internal 0, server 1, client 2) are OTLP's less one
      at = writeVarint(out, writeVarint(out, at, T.kind), span.kind + 1);
      at = writeFixed64(out, at, T.start, span.startMs);
      at = writeFixed64(out, at, T.end, span.endMs ?? span.startMs);
      for (let n = this.counts[i]!; n > 0; n--) at = writeBytesField(out, at, T.attribute, pieces[piece++]!);
      at = writeBytesField(out, at, T.status, STATUS[span.status]!);
      chunks.push(out.subarray(start, at));
    }
    pieces.length = 0;
    return chunks;
  }

  /** the size of a span's `Span` message; its name's bytes and its attributes' messages are kept in `pieces` */
  private measure(traceId: string, span: RecordedSpan, index: number): number {
    const name = this.attributes.text(span.name);
    this.pieces.push(name);
    let size = bytesFieldLength(T.traceId, idLength(traceId)) + bytesFieldLength(T.spanId, idLength(span.spanId));
    if (span.parentId !== null) size += bytesFieldLength(T.parentSpanId, idLength(span.parentId));
    size += bytesFieldLength(T.name, name.length) + varintLength(T.kind) + varintLength(span.kind + 1);
    size += 2 * (varintLength(T.start) + FIXED64);
    const attributes = span.attributes;
    let count = 0;
    for (const key in attributes) {
      const keyValue = this.attributes.keyValue(key, attributes[key]!);
      this.pieces.push(keyValue);
      size += bytesFieldLength(T.attribute, keyValue.length);
      count++;
    }
    this.counts[index] = count;
    return size + bytesFieldLength(T.status, STATUS[span.status]!.length);
  }
}

/**
 * Frames batches of encoded spans (`SpanEncoder`'s chunks) as OTLP/HTTP protobuf `ExportTraceServiceRequest`s for one
 * exporter: its resource and Kong's scope, encoded once, then the chunks as they are.
 */
export class TraceEncoder {
  /** the `resource` field of `ResourceSpans` and the `scope` field of `ScopeSpans` */
  private readonly resource: Buffer;
  private readonly scope: Buffer;
  /** the memory of batches given back (`release`), for the next ones: a batch of a few hundred spans is tens of KiB */
  private readonly spare: ArrayBuffer[] = [];

  constructor(resource: Uint8Array) {
    this.resource = Buffer.allocUnsafe(bytesFieldLength(T.resource, resource.length));
    writeBytesField(this.resource, 0, T.resource, resource);
    this.scope = Buffer.allocUnsafe(bytesFieldLength(T.scope, KONG_SCOPE.length));
    writeBytesField(this.scope, 0, T.scope, KONG_SCOPE);
  }

  /** a batch's request body; its memory may be given back with `release` once the body is sent (or given up) */
  encode(chunks: readonly Uint8Array[]): Buffer {
    let spans = 0;
    for (let i = 0; i < chunks.length; i++) spans += chunks[i]!.length;
    const scopeSpans = this.scope.length + spans;
    const resourceSpans = this.resource.length + bytesFieldLength(T.scopeSpans, scopeSpans);
    const out = this.buffer(bytesFieldLength(T.resourceSpans, resourceSpans));
    let at = writeVarint(out, writeVarint(out, 0, T.resourceSpans), resourceSpans);
    at += this.resource.copy(out, at);
    at = writeVarint(out, writeVarint(out, at, T.scopeSpans), scopeSpans);
    at += this.scope.copy(out, at);
    for (let i = 0; i < chunks.length; i++) {
      out.set(chunks[i]!, at);
      at += chunks[i]!.length;
    }
    return out;
  }

  /** gives back the memory of a body `encode` made, to be reused for a later batch */
  release(body: Buffer): void {
    if (body.byteOffset === 0 && body.buffer.byteLength >= SPARE_MIN_BYTES && this.spare.length < SPARE_BUFFERS) this.spare.push(body.buffer as ArrayBuffer);
  }

  /** `size` bytes: given-back memory when there is enough, else new memory of its own */
  private buffer(size: number): Buffer {
    const spare = this.spare.pop();
    if (spare !== undefined && spare.byteLength >= size) return Buffer.from(spare, 0, size);
    return Buffer.from(new ArrayBuffer(Math.max(size, SPARE_MIN_BYTES, spare?.byteLength ?? 0)), 0, size);
  }
}
