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

/** A stage's span when its instrumentation is on (`router`, `plugin_access`, `plugin_header_filter`), else null. */
export function stageSpan(spans: RequestSpans | null | undefined, type: 'router' | 'plugin_access' | 'plugin_header_filter', name: string): RecordedSpan | null {
  return spans != null && spans.has(type) ? spans.start(name) : null;
}

/** The `kong.balancer` span of the upstream request: it starts when the request leaves and ends with the response. */
export function startBalancerSpan(spans: RequestSpans | null, target: UpstreamTarget, serviceHost: string | undefined): void {
  if (spans === null || spans.balancerSpanId === null) return;
  const attributes: Record<string, string | number> = { try_count: 1, 'net.peer.ip': target.host, 'net.peer.port': target.port };
  if (serviceHost !== undefined) attributes['net.peer.name'] = serviceHost;
  spans.start('kong.balancer', SpanKind.CLIENT, attributes, spans.balancerSpanId);
}
