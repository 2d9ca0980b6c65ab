import type { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamResponse } from '@gatehouse/plugins';
import type { UpstreamTarget } from '../compile/types';
import type { ExchangeTrace } from '../observe/exchange-trace';
import type { Exchange } from '../pipeline/exchange';
import { peerAddress } from './client-ip';
import { upstreamPath } from './upstream-path';

/** What a forwarder sends: everything decided, nothing left to compute. */
export interface UpstreamRequest {
  target: UpstreamTarget;
  method: string;
  /** path and query string */
  path: string;
  headers: Record<string, string | string[]>;
  /** a buffered or rewritten body, the client's stream, or nothing */
  body: Buffer | Readable | null;
  /** a WebSocket (or other) upgrade: Connection/Upgrade are kept */
  upgrade: boolean;
  /** headers plugins set for the client's response (lower-case names); they replace the upstream's of that name */
  responseHeaders: ReadonlyMap<string, string> | null;
  /** the plugins' response hooks, when any ran on the request: they see the upstream's response before it is sent */
  onResponse: ResponseInterceptor | null;
  /** the request's id and timings: the forwarder stamps the response head with them */
  trace?: ExchangeTrace | null;
  /** read the whole response body before answering (Kong's response_buffering); streamed when absent or false */
  bufferResponse?: boolean;
}

/** Runs the response hooks on the upstream's status and headers (see ResponseInterception). */
export type ResponseInterceptor = (response: UpstreamResponse) => void;

/**
 * Client headers that never pass as sent: hop-by-hop headers, the identity headers only the gateway may set, and the
 * forwarding headers it rewrites.
 */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'x-consumer-id',
  'x-consumer-username',
  'x-consumer-custom-id',
  'x-credential-identifier',
  'x-anonymous-consumer',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-path',
  'x-forwarded-prefix',
  'x-real-ip',
]);

/** Headers named in the client's Connection header are hop-by-hop too. */
function connectionListed(connection: string | undefined): Set<string> | null {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return null;
  const names = new Set<string>();
  for (const token of connection.split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '' && name !== 'keep-alive' && name !== 'close' && name !== 'upgrade') names.add(name);
  }
  return names.size > 0 ? names : null;
}

function hostWithoutPort(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0 || host.endsWith(']')) return host;
  return host.slice(0, colon);
}

/**
 * The upstream request for an exchange that passed its plugins. Identity headers come from what authentication
 * decided; client-sent copies were dropped above, on every route.
 */
export function buildUpstreamRequest(ex: Exchange, target: UpstreamTarget, upgrade = false, onResponse: ResponseInterceptor | null = null): UpstreamRequest {
  const compiled = ex.compiledRoute;
  const matched = ex.matched;
  const incoming = ex.headers;
  const headers: Record<string, string | string[]> = {};
  const listed = connectionListed(incoming.connection);
  const removed = ex.removedHeaders;
  for (const name in incoming) {
    // HTTP/2 pseudo-headers (`:path`, `:authority`, …) belong to the client's connection
    if (name.charCodeAt(0) === 58 /* : */ || NOT_FORWARDED.has(name)) continue;
    if (listed !== null && listed.has(name)) continue;
    if (removed !== null && removed.has(name)) continue;
    const value = incoming[name];
    if (value !== undefined) headers[name] = value;
  }
  if (upgrade) {
    if (incoming.connection !== undefined) headers.connection = incoming.connection;
    if (incoming.upgrade !== undefined) headers.upgrade = incoming.upgrade;
  }
  if (ex.setHeaders !== null) for (const [name, value] of ex.setHeaders) headers[name] = value as string | string[];

  const consumer = ex.consumer;
  if (consumer !== null) {
    headers['x-consumer-id'] = consumer.id;
    if (consumer.username != null) headers['x-consumer-username'] = consumer.username;
    if (consumer.custom_id != null) headers['x-consumer-custom-id'] = consumer.custom_id;
  }
  if (ex.credential !== null) headers['x-credential-identifier'] = ex.credential.identifier;
  if (ex.anonymous) headers['x-anonymous-consumer'] = 'true';

  const clientHost = incoming.host;
  const forwardedFor = incoming['x-forwarded-for'];
  // the hop that connected to us is appended (behind a trusted proxy, that proxy; the client IP is in x-real-ip)
  headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${peerAddress(ex.incoming)}` : ex.clientIp;
  headers['x-forwarded-proto'] = ex.scheme;
  if (clientHost !== undefined) headers['x-forwarded-host'] = hostWithoutPort(clientHost);
  headers['x-forwarded-port'] = String(ex.incoming.socket.localPort ?? '');
  headers['x-forwarded-path'] = ex.path;
  if (compiled.stripPath && matched.length > 0) headers['x-forwarded-prefix'] = matched;
  headers['x-real-ip'] = ex.clientIp;
  // the gateway's request id travels upstream (Kong's `headers_upstream`, on by default); a client's copy is replaced
  if (ex.trace !== null && ex.trace.headers.upstreamRequestId !== false) headers['x-kong-request-id'] = ex.trace.requestId;
  // Kong 3.9 continues the request's Via with its own, whatever `headers` says
  if (ex.trace !== null) headers.via = upstreamVia(incoming.via, ex.incoming.httpVersion, ex.trace.headers.serverToken);
  // a plugin may choose the Host the upstream sees (request-transformer `add`/`replace` of `host`)
  const pluginHost = ex.setHeaders?.get('host');
  headers.host = typeof pluginHost === 'string' ? pluginHost : compiled.preserveHost && clientHost !== undefined ? clientHost : target.hostHeader;

  let body: Buffer | Readable | null = null;
  if (ex.body !== null) {
    body = ex.body;
    headers['content-length'] = String(ex.body.length);
    if (ex.bodyContentType !== null) headers['content-type'] = ex.bodyContentType;
  } else if (sendsBody(incoming)) {
    body = ex.bodySource ?? ex.incoming;
  }

  // header names a plugin spelled with capitals go upstream so spelled (undici sends names as given)
  if (ex.setHeaderNames !== null) {
    for (const [lower, spelled] of ex.setHeaderNames) {
      const value = headers[lower];
      if (value === undefined || lower === 'host') continue;
      delete headers[lower];
      headers[spelled] = value;
    }
  }

  const query = ex.upstreamQuery();
  const path = ex.upstreamPathOverride ?? upstreamPath(target.basePath, ex.path, matched, compiled.stripPath, compiled.pathHandling);
  const method = ex.upstreamMethod ?? ex.method;
  return { target, method, path: query === '' ? path : `${path}?${query}`, headers, body, upgrade, responseHeaders: ex.responseHeaders, onResponse, trace: ex.trace, bufferResponse: compiled.responseBuffering };
}

/** Whether the client's request has a body to forward: a non-zero Content-Length, or a Transfer-Encoding. */
export function sendsBody(headers: IncomingHttpHeaders): boolean {
  return headers['content-length'] !== undefined ? headers['content-length'] !== '0' : headers['transfer-encoding'] !== undefined;
}

/** `Via` on the upstream request: the client's, then `<HTTP version> <server token>` (`1.1 gatehouse/x`, `2 gatehouse/x`). */
export function upstreamVia(given: string | string[] | undefined, httpVersion: string, serverToken: string): string {
  const own = `${httpVersion === '2.0' ? '2' : httpVersion} ${serverToken}`;
  const before = Array.isArray(given) ? given.join(', ') : given;
  return before ? `${before}, ${own}` : own;
}
