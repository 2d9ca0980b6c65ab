import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { CompiledConfig } from '../compile/types';
import type { ExchangeTrace } from '../observe/exchange-trace';
import { routerSpan as startRouterSpan } from '../observe/request-spans';
import { Exchange } from '../pipeline/exchange';
import { scrubClientHeaders } from '../proxy/client-headers';
import { peerAddress } from '../proxy/client-ip';
import { normalizePath } from '../proxy/normalize-path';
import { requestFacts } from '../proxy/request-facts';
import { isForbiddenTarget } from '../proxy/request-target';
import { ProxyErrors, type FixedResponse } from '../proxy/responses';
import { grpcRouteRefusal } from '../grpc/grpc-admission';
import type { ProxyPipeline } from './proxy-pipeline';

// Admission, the first stage of every request: the target is checked and normalised, the router picks the route, the
// route's schemes are checked, and the request becomes an Exchange — or gets the gateway's own answer.

/** The path of an absolute-form request target (`http://host/path?q`), with its query. */
function originForm(url: string): string {
  if (url.charCodeAt(0) === 47 /* / */ || !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** The TLS server name the client sent ('' when none). */
function serverNameOf(req: IncomingMessage): string {
  const name = (req.socket as Partial<TLSSocket>).servername;
  return typeof name === 'string' ? name : '';
}

/** Where a request that matched a route over the wrong scheme goes: 426, or a redirect to https. */
function httpsRequired(status: number, req: IncomingMessage, tlsPort: number | null): FixedResponse {
  if (status === 426) return ProxyErrors.useHttps;
  const host = req.headers.host ?? '';
  const bare = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  const authority = tlsPort === null || tlsPort === 443 ? bare : `${bare}:${tlsPort}`;
  const location = `https://${authority}${req.url ?? '/'}`;
  return { status, body: Buffer.alloc(0), headers: { location, 'content-length': '0' } };
}

/**
 * Routes a request against the current configuration: the exchange to run, or the gateway's own answer. The path
 * is normalised here, once: the router matches it, plugins see it and the upstream request is built from it. The
 * exchange reads the holder's config once and uses that object to its end.
 */
export function admit(p: ProxyPipeline, req: IncomingMessage, scheme: string, trace: ExchangeTrace | null = null): Exchange | FixedResponse {
  const config: CompiledConfig = p.holder.current;
  const target = req.url ?? '/';
  // a raw `\`, a control character or a space: refused before anything reads the target (decision 32)
  if (isForbiddenTarget(target)) return ProxyErrors.badRequest;
  scrubClientHeaders(req, p.allowUnderscores);
  const url = originForm(target);
  const q = url.indexOf('?');
  const path = normalizePath(q < 0 ? url : url.slice(0, q));
  if (path === null) return ProxyErrors.badRequest;
  const router = config.router;
  const routerSpan = startRouterSpan(trace?.spans);
  // a header sent on several lines is matched line by line (Node joins most repeated headers with ", ")
  // HTTP/2 names the host in `:authority`
  const authority = req.headers[':authority'];
  const host = req.headers.host ?? (typeof authority === 'string' ? authority : undefined);
  const sni = scheme === 'https' ? serverNameOf(req) : undefined;
  const facts = router.usesExpressions ? requestFacts(req, scheme, q < 0 ? '' : url.slice(q + 1)) : undefined;
  const match = router.match(req.method ?? 'GET', host, path, router.usesHeaders ? req.headersDistinct : req.headers, req.socket.localPort, sni, facts);
  if (routerSpan !== null) trace!.spans!.endWhen(routerSpan);
  if (match === null) return ProxyErrors.noRoute;
  const route = match.route;
  if (route.grpc) {
    const refusal = grpcRouteRefusal(route, req, scheme);
    if (refusal !== null) return refusal;
  } else if (scheme === 'http' ? !route.acceptsHttp : !route.acceptsHttps) {
    return scheme === 'http' && route.acceptsHttps ? httpsRequired(route.httpsRedirectStatus, req, p.tlsPort) : ProxyErrors.noRoute;
  }
  const ex = new Exchange(req, path, q < 0 ? '' : url.slice(q + 1), scheme, p.clientIpOf(req), config, route, match.matched, p.runtime);
  if (p.trusted !== null && p.trusted.trusts(peerAddress(req))) ex.fromTrustedProxy = true;
  if (match.pattern !== undefined) ex.pathPattern = match.pattern;
  ex.bodyLimit = p.bodyLimit;
  ex.trace = trace;
  if (trace?.spans) trace.spans.root.attributes['http.client_ip'] = ex.clientIp;
  return ex;
}
