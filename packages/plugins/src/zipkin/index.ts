import { definePlugin, type ExchangeSummary, type PluginContext } from '../contract';
import { randomId } from '../shared/tracing/ids';
import { extractContext, injectContext, propagationInForce, type PropagationConfig } from '../shared/tracing/propagation';
import { nowMs } from '../shared/tracing/request-spans';
import { TracingHttpSender } from '../shared/tracing/http-sender';
import { SpanExport } from '../shared/tracing/span-queue';
import { zipkinConfigSchema, type ZipkinConfig } from './schema';
import { parseTagsHeader, zipkinJson, ZipkinSpan } from './span';

interface ZipkinState {
  request: ZipkinSpan;
  proxy: ZipkinSpan;
}

const STATE = 'zipkin:spans';
const micros = (epochMs: number) => epochMs * 1000;

const exporter = new SpanExport<ZipkinConfig, Record<string, unknown>>('zipkin', '', (config) => JSON.stringify([config.http_endpoint, config.connect_timeout, config.send_timeout, config.read_timeout]), (config) => {
  const sender = new TracingHttpSender(config.http_endpoint!, config, { 'content-type': 'application/json' }, (s) => s >= 200 && s < 300);
  return { send: (batch) => sender.send(JSON.stringify(batch)), close: () => sender.close() };
});

/** Closes the collectors' connections (shutdown, tests). */
export function closeZipkinExporters(): Promise<void> {
  return exporter.close();
}

/** The request span (SERVER) from the incoming context, and its proxy child (CLIENT) whose ids go upstream. */
function startSpans(ctx: PluginContext, config: ZipkinConfig): { state: ZipkinState; propagation: PropagationConfig; extracted: ReturnType<typeof extractContext> } {
  const propagation = propagationInForce(config);
  const extracted = extractContext(propagation, ctx.req.headers);
  const incoming = extracted.ctx;
  const shouldSample = incoming.shouldSample ?? Math.random() < config.sample_ratio;
  const traceId = incoming.traceId ?? randomId(config.traceid_byte_count);
  const [spanId, parentId] = incoming.reuseSpanId ? [incoming.spanId, incoming.parentId] : [undefined, incoming.spanId];
  const method = ctx.req.method;
  const name = config.http_span_name === 'method_path' ? `${method} ${ctx.req.path}` : method;
  const request = new ZipkinSpan('SERVER', name, micros(nowMs()), shouldSample, traceId, spanId, parentId, incoming.baggage);
  request.setTag('lc', 'kong');
  request.setTag('http.method', method);
  request.setTag('http.host', String(ctx.req.headers.host ?? '').replace(/:\d+$/, ''));
  request.setTag('http.path', ctx.req.path);
  if (ctx.req.httpVersion !== undefined) request.setTag('http.protocol', `HTTP/${Number(ctx.req.httpVersion)}`);
  for (const tag of config.static_tags ?? []) request.setTag(tag.name, tag.value);
  const { tags, errors } = parseTagsHeader(ctx.req.headers[config.tags_header.toLowerCase()]);
  for (const [k, v] of Object.entries(tags)) request.setTag(k, v);
  if (errors.length > 0) ctx.runtime.log?.warn?.(`Could not parse the following Zipkin tags: ${errors.join(', ')}`);
  const proxy = request.child('CLIENT', `${name} (proxy)`, micros(nowMs()));
  return { state: { request, proxy }, propagation, extracted };
}

function tagServiceAndRoute(ctx: PluginContext, span: ZipkinSpan): void {
  if (ctx.service?.id) {
    span.setTag('kong.service', ctx.service.id);
    if (typeof ctx.service.name === 'string') {
      span.serviceName = ctx.service.name;
      span.setTag('kong.service_name', ctx.service.name);
    }
  }
  if (ctx.route) {
    span.setTag('kong.route', ctx.route.id);
    if (typeof ctx.route.name === 'string') span.setTag('kong.route_name', ctx.route.name);
  }
}

/** The end of the exchange: phase annotations or duration tags, the balancer try, and the three spans reported. */
function finishSpans(ctx: PluginContext, config: ZipkinConfig, state: ZipkinState, summary: ExchangeSummary): void {
  const now = micros(nowMs());
  const { request, proxy } = state;
  // the request span starts when the request arrived
  const start = Math.min(request.timestamp, micros(summary.startedAt));
  request.timestamp = start;
  const proxied = summary.latencies.proxy >= 0;
  const sentAt = proxied ? start + summary.latencies.kong * 1000 : now;
  const headersAt = proxied ? sentAt + summary.latencies.proxy * 1000 : now;
  if (config.phase_duration_flavor === 'annotations') {
    request.annotate('krs', request.timestamp);
    request.annotate('krf', request.timestamp);
    proxy.annotate('kas', proxy.timestamp);
    proxy.annotate('kaf', Math.max(proxy.timestamp, sentAt));
    proxy.annotate('khs', headersAt);
    proxy.annotate('khf', headersAt);
    proxy.annotate('kbs', headersAt);
    proxy.annotate('kbf', now);
  } else {
    request.setTag('kong.rewrite.duration_ms', 0);
    proxy.setTag('kong.access.duration_ms', Math.max(0, Math.round((sentAt - proxy.timestamp) / 1000)));
    proxy.setTag('kong.header_filter.duration_ms', 0);
    proxy.setTag('kong.body_filter.duration_ms', Math.max(0, Math.round((now - headersAt) / 1000)));
  }
  const reports: ZipkinSpan[] = [];
  const target = summary.upstreamTarget;
  if (target !== null) {
    const attempt = request.child('CLIENT', `${request.name} (balancer try 1)`, sentAt);
    attempt.ip = target.host;
    attempt.port = target.port;
    attempt.setTag('kong.balancer.try', 1);
    tagServiceAndRoute(ctx, attempt);
    attempt.finish(headersAt);
    reports.push(attempt);
    proxy.setTag('peer.hostname', ctx.service?.host);
    proxy.ip = target.host;
    proxy.port = target.port;
  }
  request.setTag('http.status_code', summary.status);
  if (summary.consumer) request.setTag('kong.consumer', summary.consumer.id);
  if (config.include_credential && summary.credential?.id) request.setTag('kong.credential', summary.credential.id);
  request.setTag('kong.node.id', ctx.runtime.nodeId);
  tagServiceAndRoute(ctx, proxy);
  proxy.finish(now);
  request.finish(now);
  reports.push(proxy, request);
  if (!request.shouldSample || config.http_endpoint === null) return;
  exporter.add(ctx.runtime, ctx.pluginId, config, config.queue, reports.map((span) => zipkinJson(span, config.local_service_name, config.default_service_name)));
}

/**
 * Kong's zipkin: a SERVER span for the request and a CLIENT span for its proxying (plus one per balancer try), ids
 * from the incoming headers when present, propagated per `propagation`, reported in Zipkin v2 JSON to `http_endpoint`.
 */
export const zipkin = definePlugin<ZipkinConfig, unknown>({
  name: 'zipkin',
  priority: 100000,
  version: '3.9.0',
  configSchema: zipkinConfigSchema,
  auth: false,
  noConsumer: false,
  access: (ctx, config) => {
    const { state, propagation, extracted } = startSpans(ctx, config);
    ctx.locals?.set(STATE, state);
    const { proxy } = state;
    const inject = { ...extracted.ctx, traceId: proxy.traceId, spanId: proxy.spanId, parentId: proxy.parentId, shouldSample: proxy.shouldSample, baggage: proxy.baggage };
    if (inject.parentId === undefined) delete inject.parentId;
    if (inject.baggage === undefined) delete inject.baggage;
    const traceIds = injectContext(propagation, extracted, inject, ctx.upstream, (message) => ctx.runtime.log?.error(`[zipkin] ${message}`));
    if (traceIds !== null) ctx.logValues?.set('trace_id', traceIds);
    if (config.http_response_header_for_traceid !== null) ctx.response?.setHeader(config.http_response_header_for_traceid, proxy.traceId);
  },
  log: (ctx, config, summary) => {
    let state = ctx.locals?.get(STATE) as ZipkinState | undefined;
    state ??= startSpans(ctx, config).state;
    finishSpans(ctx, config, state, summary);
  },
});
