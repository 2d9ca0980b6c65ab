import { requestLogs, SEVERITY, type RequestLogRecord } from '../shared/request-logs';
import { TracingHttpSender } from '../shared/tracing/http-sender';
import { SpanExport } from '../shared/tracing/span-queue';
import type { PluginContext } from '../contract';
import type { QueueConfig } from '../shared/queue-schema';
import { unixNanos } from './fields';
import { keyValues, otlp } from './proto';
import { resourceAttributes } from './resource';
import type { OpenTelemetryConfig } from './schema';

/** A log line ready to export: the request's id, and its trace (id and flags) when the request is traced. */
export interface ExportLog {
  record: RequestLogRecord;
  requestId: string;
  trace: { traceId: string; flags: number } | null;
}

/** One log line as an OTLP `LogRecord` (Kong's shape: body the line, `request.id` and `introspection.*` attributes). */
function logRecord({ record, requestId, trace }: ExportLog): Record<string, unknown> {
  const time = unixNanos(record.timeMs);
  const severity = SEVERITY[record.level];
  return {
    timeUnixNano: time,
    observedTimeUnixNano: time,
    ...(severity !== undefined ? { severityNumber: severity[0], severityText: severity[1] } : {}),
    body: { stringValue: record.body },
    attributes: keyValues({ 'request.id': requestId, ...record.attributes }),
    ...(trace !== null ? { traceId: Buffer.from(trace.traceId, 'hex'), flags: trace.flags } : {}),
    ...(record.spanId !== null ? { spanId: Buffer.from(record.spanId, 'hex') } : {}),
  };
}

/**
 * An OTLP/HTTP protobuf `ExportLogsServiceRequest` for a batch of log lines under one resource and Kong's scope,
 * encoded by the generated class (log lines are few: a request writes some, most write none).
 */
export function encodeLogs(batch: readonly ExportLog[], resource: readonly { key: string; value: object }[]): Uint8Array {
  return otlp.ExportLogsServiceRequest.encode({
    resourceLogs: [{ resource: { attributes: resource }, scopeLogs: [{ scope: { name: 'kong-internal', version: '0.1.0' }, logRecords: batch.map(logRecord) }] }],
  }).finish();
}

/** Log lines are batched per configuration (`<plugin id>:logs`, Kong's `queue`) into one OTLP request. */
const logExport = new SpanExport<OpenTelemetryConfig, ExportLog>(
  'opentelemetry',
  ':logs',
  (config) => JSON.stringify([config.logs_endpoint, config.headers, config.resource_attributes, config.connect_timeout, config.send_timeout, config.read_timeout]),
  (config, runtime) => {
    const headers = { 'content-type': 'application/x-protobuf', ...(config.headers ?? {}) };
    const sender = new TracingHttpSender(config.logs_endpoint!, config, headers, (status) => status === 200);
    const resource = keyValues(resourceAttributes(config, runtime));
    return { send: (batch) => sender.send(encodeLogs(batch, resource)), close: () => sender.close() };
  },
);

/** Log phase: queues the request's log lines for `logs_endpoint`, with the request's trace when it has one. */
export function exportRequestLogs(ctx: PluginContext, config: OpenTelemetryConfig, queue: QueueConfig, requestId: string, trace: ExportLog['trace']): void {
  const records = requestLogs(ctx);
  if (records.length === 0) return;
  logExport.add(ctx.runtime, ctx.pluginId, config, queue, records.map((record) => ({ record, requestId, trace })));
}

export function closeLogExporters(): Promise<void> {
  return logExport.close();
}
