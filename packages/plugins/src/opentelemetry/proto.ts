// a static import, so the built CLI bundles the generated classes with the rest
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import protobuf from 'protobufjs/minimal.js';

/**
 * The OTLP protobuf classes generated (pbjs static code) from OpenTelemetry's .proto files, as the OpenTelemetry
 * project's `@opentelemetry/otlp-transformer` ships them, and the protobufjs `Writer` they encode with. The exporters
 * drive one writer per batch; every message shape and field number comes from these classes (see `fieldTag`).
 */
export type Writer = protobuf.Writer;
export const Writer = protobuf.Writer;

/** A generated message class: `encode` writes a plain object (fields by their JSON names) to a writer. */
export interface MessageCodec {
  encode(message: object, writer?: Writer): Writer;
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs: StringConstructor; bytes: ArrayConstructor; defaults: boolean }): unknown;
}

interface V1<T> {
  v1: T;
}
interface GeneratedRoot {
  opentelemetry: {
    proto: {
      common: V1<{ KeyValue: MessageCodec; InstrumentationScope: MessageCodec; AnyValue: MessageCodec }>;
      resource: V1<{ Resource: MessageCodec }>;
      trace: V1<{ Span: MessageCodec; Status: MessageCodec; ResourceSpans: MessageCodec; ScopeSpans: MessageCodec }>;
      logs: V1<{ LogRecord: MessageCodec; ResourceLogs: MessageCodec; ScopeLogs: MessageCodec }>;
      collector: { trace: V1<{ ExportTraceServiceRequest: MessageCodec }>; logs: V1<{ ExportLogsServiceRequest: MessageCodec }> };
    };
  };
}

// the generated module is typed as a reflection Root, but it is pbjs's static module: plain namespaces of classes
const proto = (generatedRoot as unknown as GeneratedRoot).opentelemetry.proto;
export const otlp = {
  KeyValue: proto.common.v1.KeyValue,
  AnyValue: proto.common.v1.AnyValue,
  InstrumentationScope: proto.common.v1.InstrumentationScope,
  Resource: proto.resource.v1.Resource,
  Span: proto.trace.v1.Span,
  Status: proto.trace.v1.Status,
  ResourceSpans: proto.trace.v1.ResourceSpans,
  ScopeSpans: proto.trace.v1.ScopeSpans,
  ExportTraceServiceRequest: proto.collector.trace.v1.ExportTraceServiceRequest,
  LogRecord: proto.logs.v1.LogRecord,
  ResourceLogs: proto.logs.v1.ResourceLogs,
  ScopeLogs: proto.logs.v1.ScopeLogs,
  ExportLogsServiceRequest: proto.collector.logs.v1.ExportLogsServiceRequest,
};

/**
 * The key (field number and wire type) the generated class writes for `field`, read from its own encoding of a message
 * holding only that field with an empty value (`probe`): the writers below follow the classes' layout, not a copy of it.
 */
export function fieldTag(codec: MessageCodec, probe: object): number {
  return protobuf.Reader.create(codec.encode(probe).finish()).uint32();
}

export type AttributeValue = string | number | boolean;
type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: number } | { doubleValue: number };

/** An attribute's OTLP value: as Kong, `http.status_code` is an integer and every other number a double. */
export function anyValue(key: string, value: AttributeValue): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return key === 'http.status_code' ? { intValue: value } : { doubleValue: value };
}

/** Attributes as OTLP `KeyValue` objects, for the generated classes. */
export function keyValues(attributes: Readonly<Record<string, AttributeValue>>): Array<{ key: string; value: object }> {
  return Object.keys(attributes).map((key) => ({ key, value: anyValue(key, attributes[key]!) }));
}

/** An exporter's `Resource`, encoded once. */
export function resourceBytes(attributes: Readonly<Record<string, string>>): Uint8Array {
  return otlp.Resource.encode({ attributes: keyValues(attributes) }).finish();
}

/** The instrumentation scope Kong names its spans and logs with, encoded. */
export const KONG_SCOPE = otlp.InstrumentationScope.encode({ name: 'kong-internal', version: '0.1.0' }).finish();
