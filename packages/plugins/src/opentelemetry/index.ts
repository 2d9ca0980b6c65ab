import { definePlugin } from '../contract';
import { nowMs } from '../shared/tracing/request-spans';
import { TracingHttpSender } from '../shared/tracing/http-sender';
import { sampledByTraceId } from '../shared/tracing/sampler';
import { queueConfigOf } from '../shared/queue-schema';
import { SpanExport } from '../shared/tracing/span-queue';
import { TraceEncoder, type ExportSpan } from './otlp';
import { resourceBytes } from './proto';
import { checkOpenTelemetryConfig, openTelemetryConfigSchema, type OpenTelemetryConfig } from './schema';
import { propagateTrace, TRACE_DECISION, type TraceDecision } from './traces';

export const OPENTELEMETRY_VERSION = '3.9.0';

function tracesEndpoint(config: OpenTelemetryConfig): string | null {
  return config.traces_endpoint ?? config.endpoint;
}

/** Spans are batched per configuration (Kong's `queue`, 200 spans a batch by default) into one OTLP request. */
const exporter = new SpanExport<OpenTelemetryConfig, ExportSpan>('opentelemetry', ':traces', (config) => JSON.stringify([tracesEndpoint(config), config.headers, config.resource_attributes, config.connect_timeout, config.send_timeout, config.read_timeout]), (config, runtime) => {
  const headers = { 'content-type': 'application/x-protobuf', ...(config.headers ?? {}) };
  const sender = new TracingHttpSender(tracesEndpoint(config)!, config, headers, (status) => status === 200);
  const defaults: Record<string, string> = { 'service.version': OPENTELEMETRY_VERSION };
  if (runtime.nodeId !== undefined) defaults['service.instance.id'] = runtime.nodeId;
  const encoder = new TraceEncoder(resourceBytes(config.resource_attributes, defaults));
  return { send: (batch) => sender.send(encoder.encode(batch)), close: () => sender.close() };
});

function undecidedTrace(globalRate: number | undefined, config: OpenTelemetryConfig, traceId: string): TraceDecision {
  return { traceId, sampled: sampledByTraceId(traceId, config.sampling_rate ?? globalRate ?? 0.01) };
}

/** Closes the collectors' connections (shutdown, tests). */
export function closeOpenTelemetryExporters(): Promise<void> {
  return exporter.close();
}

/**
 * Kong's opentelemetry: propagates tracing headers per `propagation`; with tracing instrumentations on, exports the
 * request's spans (the `kong` span and the instrumented stages) over OTLP/HTTP to `traces_endpoint` when sampled.
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
    const spans = ctx.spans ?? null;
    if (spans === null || tracesEndpoint(config) === null) return;
    // a request answered before this plugin's access hook ran (an authentication refusal) is sampled by its own id
    const decision = (ctx.locals?.get(TRACE_DECISION) as TraceDecision | undefined) ?? undecidedTrace(ctx.runtime.tracing?.samplingRate, config, spans.traceId);
    if (!decision.sampled) return;
    const root = spans.root;
    root.attributes['http.status_code'] = summary.status;
    root.attributes['http.route'] = summary.route?.paths?.[0] ?? '';
    spans.finishOpen(nowMs());
    const traceId = decision.traceId;
    const entries = spans.spans.map((span): ExportSpan => ({ traceId, span }));
    exporter.add(ctx.runtime, ctx.pluginId, config, queueConfigOf(config), entries);
  },
});
