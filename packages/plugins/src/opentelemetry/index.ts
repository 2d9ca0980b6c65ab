import { definePlugin, type ExchangeSummary, type PluginContext } from '../contract';
import { nowMs } from '../shared/tracing/request-spans';
import { TracingHttpSender } from '../shared/tracing/http-sender';
import { sampledByTraceId } from '../shared/tracing/sampler';
import { queueConfigOf } from '../shared/queue-schema';
import { SpanExport } from '../shared/tracing/span-queue';
import { SpanEncoder } from './otlp';
import { TraceEncoder } from './trace-batch';
import { closeLogExporters, exportRequestLogs } from './logs';
import { resourceBytes } from './proto';
import { OPENTELEMETRY_VERSION, resourceAttributes } from './resource';
import { checkOpenTelemetryConfig, openTelemetryConfigSchema, type OpenTelemetryConfig } from './schema';
import { propagateTrace, TRACE_DECISION, type TraceDecision } from './traces';

export { OPENTELEMETRY_VERSION };

function tracesEndpoint(config: OpenTelemetryConfig): string | null {
  return config.traces_endpoint ?? config.endpoint;
}

/**
 * Spans are batched per configuration (Kong's `queue`, 200 spans a batch by default) into one OTLP request. As Kong
 * queues spans transformed for export, the queue holds a request's spans already encoded, as one entry counted as its
 * spans (its bytes are also its size for `max_bytes`): a request's objects are not kept while they wait, a batch is
 * the entries' concatenation, and a request's spans are sent (or dropped when the queue is full) together.
 */
const exporter = new SpanExport<OpenTelemetryConfig, Uint8Array>(
  'opentelemetry',
  ':traces',
  (config) => JSON.stringify([tracesEndpoint(config), config.headers, config.resource_attributes, config.connect_timeout, config.send_timeout, config.read_timeout]),
  (config, runtime) => {
    const headers = { 'content-type': 'application/x-protobuf', ...(config.headers ?? {}) };
    const sender = new TracingHttpSender(tracesEndpoint(config)!, config, headers, (status) => status === 200);
    const encoder = new TraceEncoder(resourceBytes(resourceAttributes(config, runtime)));
    const send = (batch: Uint8Array[]): Promise<void> => {
      const body = encoder.encode(batch);
      return sender.send(body).finally(() => encoder.release(body));
    };
    return { send, close: () => sender.close() };
  },
  (span) => span.length,
);
const spanEncoder = new SpanEncoder();

function undecidedTrace(globalRate: number | undefined, config: OpenTelemetryConfig, traceId: string): TraceDecision {
  return { traceId, sampled: sampledByTraceId(traceId, config.sampling_rate ?? globalRate ?? 0.01) };
}

/** Closes the collectors' connections (shutdown, tests). */
export async function closeOpenTelemetryExporters(): Promise<void> {
  await Promise.all([exporter.close(), closeLogExporters()]);
}

/**
 * Log phase, traces: the request's spans go to `traces_endpoint` when it is sampled (a request answered before the
 * access hook ran, an authentication refusal, is sampled by its own id). The request's trace decision, if any.
 */
function exportSpans(ctx: PluginContext, config: OpenTelemetryConfig, summary: ExchangeSummary): TraceDecision | null {
  const spans = ctx.spans ?? null;
  const decided = ctx.locals?.get(TRACE_DECISION) as TraceDecision | undefined;
  if (spans === null) return decided ?? null;
  const decision = decided ?? undecidedTrace(ctx.runtime.tracing?.samplingRate, config, spans.traceId);
  if (!decision.sampled) return decision;
  const root = spans.root;
  root.attributes['http.status_code'] = summary.status;
  root.attributes['http.route'] = summary.route?.paths?.[0] ?? '';
  spans.finishOpen(nowMs());
  exporter.addCounted(ctx.runtime, ctx.pluginId, config, queueConfigOf(config), spanEncoder.encode(decision.traceId, spans.spans, spans), spans.spans.length);
  return decision;
}

/**
 * Kong's opentelemetry: propagates tracing headers per `propagation`; with tracing instrumentations on, exports the
 * request's spans (the `kong` span and the instrumented stages) over OTLP/HTTP to `traces_endpoint` when sampled;
 * with `logs_endpoint`, the log lines written during the request (`kong.log`, `ngx.log` in Lua snippets) over OTLP/HTTP.
 */
export const openTelemetry = definePlugin<OpenTelemetryConfig, unknown>({
  name: 'opentelemetry',
  priority: 14,
  version: OPENTELEMETRY_VERSION,
  configSchema: openTelemetryConfigSchema,
  auth: false,
  noConsumer: false,
  checkConfig: checkOpenTelemetryConfig,
  access: (ctx, config) => {
    if (tracesEndpoint(config) !== null) propagateTrace(ctx, config);
  },
  log: (ctx, config, summary) => {
    const decision = tracesEndpoint(config) !== null ? exportSpans(ctx, config, summary) : null;
    if (config.logs_endpoint !== null) {
      const trace = decision !== null ? { traceId: decision.traceId, flags: decision.sampled ? 1 : 0 } : null;
      exportRequestLogs(ctx, config, queueConfigOf(config), summary.requestId, trace);
    }
  },
});
