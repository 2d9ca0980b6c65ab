// a static import, so the built CLI bundles the generated class with the rest
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import type { RecordedSpan, SpanAttributes } from '../shared/tracing/request-spans';

/** The instrumentation scope Kong names its spans with. */
const SCOPE = { name: 'kong-internal', version: '0.1.0' };

/** A span ready to export: its trace and whether it is sampled are the request's, decided by the plugin. */
export interface ExportSpan {
  traceId: string;
  sampled: boolean;
  span: RecordedSpan;
}

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: number } | { doubleValue: number };
interface KeyValue {
  key: string;
  value: AnyValue;
}
/** a 64-bit protobuf integer as protobufjs takes it */
interface LongBits {
  low: number;
  high: number;
  unsigned: true;
}
interface ExportTraceServiceRequestCodec {
  encode(message: unknown): { finish(): Uint8Array };
}

/**
 * The OTLP `ExportTraceServiceRequest` protobuf class generated from OpenTelemetry's .proto files, as the OpenTelemetry
 * project's `@opentelemetry/otlp-transformer` ships it (its serializer encodes through the same class). The
 * transformer's public serializer takes the SDK's span objects and converts them first, which costs as much again as
 * the encoding: the plugin builds the message from its own spans and has the generated class encode it.
 */
// the generated module is typed as a reflection Root, but it is pbjs's static module: plain namespaces of classes
const staticRoot = generatedRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ExportTraceServiceRequestCodec } } } } } };
const ExportTraceServiceRequest = staticRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

function anyValue(key: string, value: string | number | boolean): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // as Kong: http.status_code is an integer, every other number a double
  return key === 'http.status_code' ? { intValue: value } : { doubleValue: value };
}

function keyValues(attributes: SpanAttributes): KeyValue[] {
  const out: KeyValue[] = [];
  for (const key in attributes) out.push({ key, value: anyValue(key, attributes[key]!) });
  return out;
}

/** epoch milliseconds (with sub-millisecond digits) as unsigned 64-bit nanoseconds */
function unixNanos(epochMs: number): LongBits {
  const seconds = Math.floor(epochMs / 1000);
  const ns = BigInt(seconds) * 1_000_000_000n + BigInt(Math.round((epochMs - seconds * 1000) * 1e6));
  return { low: Number(ns & 0xffffffffn), high: Number(ns >> 32n), unsigned: true };
}

/** The resource of the exported spans: `service.name` `kong` and the defaults, overridden by `resource_attributes`. */
export function traceResource(attributes: Record<string, string> | null, defaults: Record<string, string>): KeyValue[] {
  return keyValues({ 'service.name': 'kong', ...defaults, ...(attributes ?? {}) });
}

function otlpSpan(entry: ExportSpan): Record<string, unknown> {
  const { span } = entry;
  return {
    traceId: Buffer.from(entry.traceId, 'hex'),
    spanId: Buffer.from(span.spanId, 'hex'),
    ...(span.parentId !== null ? { parentSpanId: Buffer.from(span.parentId, 'hex') } : {}),
    name: span.name,
    // the API's kinds (internal 0, server 1, client 2) are OTLP's less one
    kind: span.kind + 1,
    startTimeUnixNano: unixNanos(span.startMs),
    endTimeUnixNano: unixNanos(span.endMs ?? span.startMs),
    attributes: keyValues(span.attributes),
    status: { code: span.status },
  };
}

/** An OTLP/HTTP protobuf `ExportTraceServiceRequest` for a batch of spans, under one resource and Kong's scope. */
export function encodeTraces(batch: readonly ExportSpan[], resource: KeyValue[]): Uint8Array {
  return ExportTraceServiceRequest.encode({ resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: SCOPE, spans: batch.map(otlpSpan) }] }] }).finish();
}
