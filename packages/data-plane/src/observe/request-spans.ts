import type { IncomingMessage } from 'node:http';
import { RequestSpans, SpanKind, type RecordedSpan, type TracingSettings } from '@gatehouse/plugins';
import type { UpstreamTarget } from '../compile/types';
import { peerAddress } from '../proxy/client-ip';
import type { ExchangeTrace } from './exchange-trace';

/**
 * The `kong` request span (Kong's request instrumentation) for a request, when tracing instrumentations are on; its
 * start is the request's arrival. Null when they are off: nothing is recorded then.
 */
export function startRequestSpans(settings: TracingSettings | undefined, req: IncomingMessage, trace: ExchangeTrace, scheme: string): RequestSpans | null {
  if (settings === undefined || settings.instrumentations.size === 0) return null;
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const peer = peerAddress(req);
  return new RequestSpans(settings.instrumentations, performance.timeOrigin + trace.startedAt, {
    'http.method': req.method ?? 'GET',
    'http.url': `${scheme}://${host}${req.url ?? '/'}`,
    'http.host': host,
    'http.scheme': scheme,
    'http.flavor': req.httpVersion,
    // the client's address as the gateway believes it (trusted X-Forwarded-For) replaces this once routed
    'http.client_ip': peer,
    'net.peer.ip': peer,
    'kong.request.id': trace.requestId,
  });
}

/** The `kong.router` span when router instrumentation is on, else null. */
export function routerSpan(spans: RequestSpans | null | undefined): RecordedSpan | null {
  return spans != null && spans.has('router') ? spans.start('kong.router') : null;
}

type PluginPhase = 'plugin_rewrite' | 'plugin_access' | 'plugin_header_filter';
const PHASE_PREFIX: Readonly<Record<PluginPhase, string>> = {
  plugin_rewrite: 'kong.rewrite.plugin.',
  plugin_access: 'kong.access.plugin.',
  plugin_header_filter: 'kong.header_filter.plugin.',
};
/** the span names of each phase by plugin name, made on first use: one string per plugin, not one per request */
const PHASE_SPAN_NAMES: Readonly<Record<PluginPhase, Map<string, string>>> = { plugin_rewrite: new Map(), plugin_access: new Map(), plugin_header_filter: new Map() };

/**
 * A plugin hook's span (`kong.rewrite.plugin.<name>`, `kong.access.plugin.<name>`, `kong.header_filter.plugin.<name>`)
 * when its instrumentation is on, else null.
 */
export function pluginSpan(spans: RequestSpans | null | undefined, phase: PluginPhase, plugin: string): RecordedSpan | null {
  if (spans == null || !spans.has(phase)) return null;
  const names = PHASE_SPAN_NAMES[phase];
  let name = names.get(plugin);
  if (name === undefined) names.set(plugin, (name = PHASE_PREFIX[phase] + plugin));
  return spans.start(name);
}

/** The `kong.balancer` span of the upstream request: it starts when the request leaves and ends with the response. */
export function startBalancerSpan(spans: RequestSpans | null, target: UpstreamTarget, serviceHost: string | undefined): void {
  if (spans === null || spans.balancerSpanId === null) return;
  const attributes: Record<string, string | number> = { try_count: 1, 'net.peer.ip': target.host, 'net.peer.port': target.port };
  if (serviceHost !== undefined) attributes['net.peer.name'] = serviceHost;
  spans.start('kong.balancer', SpanKind.CLIENT, attributes, spans.balancerSpanId);
}
