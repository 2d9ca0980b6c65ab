import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { RequestSpans } from '@gatehouse/plugins';
import type { UpstreamTarget } from '../compile/types';
import { startBalancerSpan } from './request-spans';
import type { GatewayHeaders } from './gateway-headers';
import { newRequestId } from './request-id';

/** The end of an observed exchange, as the relay of its upstream response sees it. */
export interface ExchangeEnd {
  /** the relay of the response, told when the response closes (the client may have left before it was done) */
  relay: { responseClosed(): void } | null;
}

/**
 * The timing and identity of one request, from its arrival to the end of its response: one small object per
 * request, filled as the request goes (upstream sent, upstream answered). Times are `performance.now()` values.
 */
export class ExchangeTrace {
  readonly requestId = newRequestId();
  readonly startedAt = performance.now();
  /** epoch milliseconds of arrival */
  readonly startedAtEpoch = Date.now();
  /** bytes the connection had sent before this response (its share is the difference at the end) */
  readonly writtenBefore: number;
  /** when the request left for the upstream; -1 when it never did */
  sentAt = -1;
  /** when the upstream's response head arrived; -1 when none did */
  headersAt = -1;
  /** the upstream answered this response (Kong's source `service`); otherwise the gateway or a plugin did */
  fromUpstream = false;
  upstreamUri: string | null = null;
  /** the status the upstream answered (X-Kong-Upstream-Status), before plugins changed it; null until it answers */
  upstreamStatus: number | null = null;
  upstreamTarget: UpstreamTarget | null = null;
  /** the response head as sent by the relay (name, value, …), when the upstream answered */
  responseHeaderList: string[] | null = null;
  /**
   * Set when the end of the exchange is observed (an access log, `log` plugins): the response's 'close' is then
   * listened to once for everything, and the relay of a proxied response is told from there instead of listening too.
   */
  end: ExchangeEnd | null = null;
  /** the request's spans when tracing instrumentations are on (GATEHOUSE_TRACING_INSTRUMENTATIONS), else null */
  spans: RequestSpans | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly headers: GatewayHeaders,
  ) {
    this.writtenBefore = req.socket?.bytesWritten ?? 0;
  }

  /** called when the upstream request leaves */
  sent(uri: string, target: UpstreamTarget, serviceHost?: string): void {
    this.sentAt = performance.now();
    if (this.spans !== null) startBalancerSpan(this.spans, target, serviceHost);
    this.upstreamUri = uri;
    this.upstreamTarget = target;
  }
}

/** Whole milliseconds between two `performance.now()` values. */
export function millis(from: number, to: number): number {
  return Math.round(to - from);
}

/**
 * Headers of a response the gateway makes itself (no route, a plugin's answer, an upstream failure): request id,
 * `X-Kong-Response-Latency` and `Server`, as the setting allows. Set before the head is written.
 */
export function stampGatewayResponse(res: ServerResponse, trace: ExchangeTrace | null | undefined): void {
  if (trace == null || res.headersSent) return;
  const h = trace.headers;
  if (h.requestId) res.setHeader('X-Kong-Request-Id', trace.requestId);
  if (h.responseLatency) res.setHeader('X-Kong-Response-Latency', String(millis(trace.startedAt, performance.now())));
  if (h.server) res.setHeader('Server', h.serverToken);
}

/**
 * Headers of a plugin's answer that stands for the upstream's (a proxy-cache hit): stamped as a proxied response, as
 * Kong marks a cache hit proxied: `X-Kong-Upstream-Latency` (0, no upstream was waited for), `X-Kong-Proxy-Latency`
 * (the time until the answer was found), request id and `Via`, and no `X-Kong-Response-Latency` or `Server`.
 */
export function stampStoredResponse(res: ServerResponse, trace: ExchangeTrace | null | undefined): void {
  if (trace == null || res.headersSent) return;
  const h = trace.headers;
  if (h.upstreamLatency) res.setHeader('X-Kong-Upstream-Latency', '0');
  if (h.proxyLatency) res.setHeader('X-Kong-Proxy-Latency', String(millis(trace.startedAt, performance.now())));
  if (h.requestId) res.setHeader('X-Kong-Request-Id', trace.requestId);
  if (h.via) res.setHeader('Via', `1.1 ${h.serverToken}`);
}

/** The headers of the gateway's own answer written straight on a socket (an upgrade it refuses), as stampGatewayResponse. */
export function stampGatewayHeaders(headers: Record<string, string | string[]>, trace: ExchangeTrace): void {
  const h = trace.headers;
  if (h.requestId) headers['X-Kong-Request-Id'] = trace.requestId;
  if (h.responseLatency) headers['X-Kong-Response-Latency'] = String(millis(trace.startedAt, performance.now()));
  if (h.server) headers.Server = h.serverToken;
}

/**
 * The head of an upstream's answer to an upgrade (its 101, or whatever it answered instead), as the WebSocket relay
 * writes it from `headers` (the upstream's, lower-case names): the same headers as any proxied response.
 */
export function stampUpgradeResponse(headers: IncomingHttpHeaders, trace: ExchangeTrace): void {
  const list: string[] = [];
  const via = headers.via;
  delete headers.via;
  stampProxiedResponse(list, trace, via === undefined ? null : via);
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!;
    delete headers[name.toLowerCase()];
    headers[name] = list[i + 1]!;
  }
}

/**
 * Headers added to a proxied response head (`[name, value, …]`, as the relay writes it): latencies, request id, and
 * `Via` appended to the upstream's own `Via` when it sent one.
 */
export function stampProxiedResponse(list: string[], trace: ExchangeTrace, upstreamVia: string | null): void {
  const h = trace.headers;
  const now = performance.now();
  trace.headersAt = now;
  trace.fromUpstream = true;
  if (h.upstreamLatency) list.push('X-Kong-Upstream-Latency', String(millis(trace.sentAt, now)));
  if (h.proxyLatency) list.push('X-Kong-Proxy-Latency', String(millis(trace.startedAt, trace.sentAt)));
  if (h.requestId) list.push('X-Kong-Request-Id', trace.requestId);
  if (h.upstreamStatus && trace.upstreamStatus !== null) list.push('X-Kong-Upstream-Status', String(trace.upstreamStatus));
  if (h.via) list.push('Via', upstreamVia === null ? `1.1 ${h.serverToken}` : `${upstreamVia}, 1.1 ${h.serverToken}`);
  else if (upstreamVia !== null) list.push('Via', upstreamVia);
  trace.responseHeaderList = list;
}
