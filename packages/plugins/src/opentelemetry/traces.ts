import type { PluginContext } from '../contract';
import type { TracingContext } from '../shared/tracing/context';
import { randomId, SPAN_ID_BYTES, TRACE_ID_BYTES } from '../shared/tracing/ids';
import { extractContext, injectContext, propagationInForce } from '../shared/tracing/propagation';
import { sampledByTraceId } from '../shared/tracing/sampler';
import type { OpenTelemetryConfig } from './schema';

/** What the access hook decided for the request's trace, kept for the log hook. */
export interface TraceDecision {
  traceId: string;
  sampled: boolean;
}

export const TRACE_DECISION = 'opentelemetry:trace';

/**
 * The context written to the upstream: the incoming trace id (or the request's own), the span the upstream's work
 * hangs from (the balancer span when balancer instrumentation is on, else the request span) and the sampling decision.
 * With instrumentations off the request has no spans: a throwaway root carries the ids and nothing is sampled.
 */
function injectedContext(ctx: PluginContext, config: OpenTelemetryConfig, incoming: TracingContext): { inject: TracingContext; decision: TraceDecision } {
  const spans = ctx.spans ?? null;
  const incomingParent = incoming.spanId ?? incoming.parentId;
  if (spans === null) {
    const traceId = incoming.traceId ?? randomId(TRACE_ID_BYTES);
    const inject: TracingContext = { ...incoming, traceId, spanId: randomId(SPAN_ID_BYTES), shouldSample: false };
    if (incomingParent !== undefined) inject.parentId = incomingParent;
    else delete inject.parentId;
    return { inject, decision: { traceId, sampled: false } };
  }
  if (incoming.traceId !== undefined) spans.traceId = incoming.traceId;
  spans.root.parentId = incomingParent ?? null;
  const rate = config.sampling_rate ?? ctx.runtime.tracing?.samplingRate ?? 0.01;
  const sampled = incoming.shouldSample === false ? false : sampledByTraceId(spans.traceId, rate);
  const viaBalancer = spans.balancerSpanId !== null;
  const inject: TracingContext = { ...incoming, traceId: spans.traceId, spanId: spans.balancerSpanId ?? spans.root.spanId, shouldSample: sampled };
  const parentId = viaBalancer ? spans.root.spanId : spans.root.parentId;
  if (parentId !== null) inject.parentId = parentId;
  else delete inject.parentId;
  return { inject, decision: { traceId: spans.traceId, sampled } };
}

/** Access: read the incoming context, decide sampling, clear and inject headers per `propagation`. */
export function propagateTrace(ctx: PluginContext, config: OpenTelemetryConfig): void {
  const propagation = propagationInForce(config);
  const extracted = extractContext(propagation, ctx.req.headers);
  const { inject, decision } = injectedContext(ctx, config, extracted.ctx);
  const log = ctx.runtime.log;
  const traceIds = injectContext(propagation, extracted, inject, ctx.upstream, (message) => log?.error(`[otel] ${message}`));
  if (traceIds !== null) ctx.logValues?.set('trace_id', traceIds);
  ctx.locals?.set(TRACE_DECISION, decision);
  if (config.http_response_header_for_traceid !== null) ctx.response?.setHeader(config.http_response_header_for_traceid, decision.traceId);
}
