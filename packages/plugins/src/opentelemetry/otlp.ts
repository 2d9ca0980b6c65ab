import type { RecordedSpan } from '../shared/tracing/request-spans';
import { AttributeWriter, HexIds, unixNanos } from './fields';
import { fieldTag, KONG_SCOPE, otlp, Writer } from './proto';

/** A span ready to export, with its request's trace id (the span records only their own ids). */
export interface ExportSpan {
  traceId: string;
  span: RecordedSpan;
}

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

/**
 * Encodes batches of spans as OTLP/HTTP protobuf `ExportTraceServiceRequest`s for one exporter (one resource): the
 * resource and Kong's scope are encoded once, attributes and span names once per distinct value (`AttributeWriter`),
 * ids are decoded from hex into one buffer per batch, and each span is written straight from its record in the
 * generated classes' field order, so the bytes are those `ExportTraceServiceRequest.encode` makes of the same spans.
 */
export class TraceEncoder {
  private readonly attributes = new AttributeWriter(T.attribute);

  constructor(private readonly resource: Uint8Array) {}

  encode(batch: readonly ExportSpan[]): Uint8Array {
    const ids = new HexIds(batch.length * 32);
    const w = Writer.create();
    w.uint32(T.resourceSpans).fork().uint32(T.resource).bytes(this.resource);
    w.uint32(T.scopeSpans).fork().uint32(T.scope).bytes(KONG_SCOPE);
    for (let i = 0; i < batch.length; i++) this.span(w, ids, batch[i]!);
    return w.ldelim().ldelim().finish();
  }

  private span(w: Writer, ids: HexIds, entry: ExportSpan): void {
    const { span } = entry;
    w.uint32(T.span).fork();
    w.uint32(T.traceId).bytes(ids.trace(entry.traceId));
    w.uint32(T.spanId).bytes(ids.span(span.spanId));
    if (span.parentId !== null) w.uint32(T.parentSpanId).bytes(ids.parent(span.parentId));
    // a string field's bytes are its UTF-8 text: a name seen before is written from its cached bytes
    w.uint32(T.name).bytes(this.attributes.text(span.name));
    // the API's kinds (internal 0, server 1, client 2) are OTLP's less one
    w.uint32(T.kind).int32(span.kind + 1);
    w.uint32(T.start).fixed64(unixNanos(span.startMs));
    w.uint32(T.end).fixed64(unixNanos(span.endMs ?? span.startMs));
    this.attributes.write(w, span.attributes);
    w.uint32(T.status).bytes(STATUS[span.status]!);
    w.ldelim();
  }
}
