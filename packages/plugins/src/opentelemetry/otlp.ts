import type { RecordedSpan } from '../shared/tracing/request-spans';
import { AttributeBytes, bytesFieldLength, unixNanos, varintLength, writeBytesField, writeVarint } from './fields';
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

/** the bytes of a hex id (its whole digit pairs, as `Buffer.from(hex, 'hex')`) */
const idLength = (hex: string): number => hex.length >>> 1;

function writeId(out: Buffer, at: number, tag: number, hex: string): number {
  const length = idLength(hex);
  at = writeVarint(out, writeVarint(out, at, tag), length);
  const written = out.write(hex, at, length, 'hex');
  if (written < length) out.fill(0, at + written, at + length);
  return at + length;
}

function writeFixed64(out: Buffer, at: number, tag: number, epochMs: number): number {
  at = writeVarint(out, at, tag);
  const { low, high } = unixNanos(epochMs);
  out.writeInt32LE(low, at);
  out.writeInt32LE(high, at + 4);
  return at + FIXED64;
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
    for (let i = 0; i < spans.length; i++) {
      const start = at;
      at = writeVarint(out, writeVarint(out, at, T.span), this.sizes[i]!);
      const span = spans[i]!;
      at = writeId(out, at, T.traceId, traceId);
      at = writeId(out, at, T.spanId, span.spanId);
      if (span.parentId !== null) at = writeId(out, at, T.parentSpanId, span.parentId);
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

  constructor(resource: Uint8Array) {
    this.resource = Buffer.allocUnsafe(bytesFieldLength(T.resource, resource.length));
    writeBytesField(this.resource, 0, T.resource, resource);
    this.scope = Buffer.allocUnsafe(bytesFieldLength(T.scope, KONG_SCOPE.length));
    writeBytesField(this.scope, 0, T.scope, KONG_SCOPE);
  }

  encode(chunks: readonly Uint8Array[]): Uint8Array {
    let spans = 0;
    for (let i = 0; i < chunks.length; i++) spans += chunks[i]!.length;
    const scopeSpans = this.scope.length + spans;
    const resourceSpans = this.resource.length + bytesFieldLength(T.scopeSpans, scopeSpans);
    const out = Buffer.allocUnsafe(bytesFieldLength(T.resourceSpans, resourceSpans));
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
}
