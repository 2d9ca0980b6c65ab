import type { HrTime, SpanContext } from '@opentelemetry/api';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { RecordedSpan } from '../shared/tracing/request-spans';

/** The instrumentation scope Kong names its spans with. */
const SCOPE = { name: 'kong-internal', version: '0.1.0' };

/** A span ready to export: its trace and whether it is sampled are the request's, decided by the plugin. */
export interface ExportSpan {
  traceId: string;
  sampled: boolean;
  span: RecordedSpan;
}

function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
}

/**
 * The resource of the exported spans: `service.name` `kong`, `service.version` and `service.instance.id` (the node),
 * overridden by the plugin's `resource_attributes`.
 */
export function traceResource(attributes: Record<string, string> | null, defaults: Record<string, string>): Resource {
  return resourceFromAttributes({ 'service.name': 'kong', ...defaults, ...(attributes ?? {}) });
}

function readable(entry: ExportSpan, resource: Resource): ReadableSpan {
  const { span } = entry;
  const context: SpanContext = { traceId: entry.traceId, spanId: span.spanId, traceFlags: entry.sampled ? 1 : 0 };
  const start = hrTime(span.startMs);
  const endMs = span.endMs ?? span.startMs;
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => context,
    ...(span.parentId !== null ? { parentSpanContext: { traceId: entry.traceId, spanId: span.parentId, traceFlags: context.traceFlags } } : {}),
    startTime: start,
    endTime: hrTime(endMs),
    status: { code: span.status },
    attributes: span.attributes,
    links: [],
    events: [],
    duration: hrTime(endMs - span.startMs),
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** An OTLP `ExportTraceServiceRequest` (protobuf) for a batch of spans, encoded by the OpenTelemetry project's transformer. */
export function encodeTraces(batch: readonly ExportSpan[], resource: Resource): Uint8Array {
  const encoded = ProtobufTraceSerializer.serializeRequest(batch.map((entry) => readable(entry, resource)));
  if (encoded === undefined) throw new Error('the OTLP transformer could not encode the spans');
  return encoded;
}
