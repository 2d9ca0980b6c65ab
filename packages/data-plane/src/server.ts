import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { PluginResponse, PluginRuntime } from '@gatehouse/plugins';
import type { CompiledConfig } from './compile/types';
import type { ConfigHolder } from './config-holder';
import { closeServer, listenOn, type ListenAddress } from './listen';
import type { DataPlaneMetrics } from './metrics/data-plane-metrics';
import type { AccessLog } from './observe/access-log';
import { ExchangeObserver } from './observe/exchange-end';
import { ExchangeTrace, stampGatewayResponse } from './observe/exchange-trace';
import { defaultGatewayHeaders, type GatewayHeaders } from './observe/gateway-headers';
import { Exchange } from './pipeline/exchange';
import { runChain, type ChainLogger, type ChainOutcome } from './pipeline/run-chain';
import { peerAddress, TrustedProxies } from './proxy/client-ip';
import type { Forwarder, ForwarderKind } from './proxy/forwarder';
import { HttpProxyForwarder } from './proxy/http-proxy-forwarder';
import { ProxyErrors, renderPluginResponse, sendFixed, sendOnSocket, sendPluginResponse, type FixedResponse } from './proxy/responses';
import { UndiciForwarder, type UndiciForwarderOptions } from './proxy/undici-forwarder';
import { buildUpstreamRequest } from './proxy/upstream-request';
import { UpgradeRelay } from './proxy/websocket';

export interface DataPlaneLogger extends ChainLogger {
  warn?(message: string, detail?: Record<string, unknown>): void;
}

export interface DataPlaneServerOptions {
  holder: ConfigHolder;
  /** `host:port`, a port, or `{host, port}`; port 0 picks a free one */
  listen: ListenAddress;
  /** `undici` (default), `http-proxy`, or a Forwarder of your own */
  forwarder?: Forwarder | ForwarderKind;
  undici?: UndiciForwarderOptions;
  /** long-lived services handed to plugins (ctx.runtime) */
  runtime?: PluginRuntime;
  log?: DataPlaneLogger;
  /** serve HTTPS instead of HTTP */
  tls?: HttpsServerOptions;
  /** idle keep-alive time for client connections (ms); Kong's default is 60 s */
  keepAliveTimeout?: number;
  /**
   * proxies (CIDR blocks or addresses) whose X-Forwarded-For names the client; from anyone else the socket address
   * is the client IP. Empty by default: no proxy is trusted.
   */
  trustedIps?: readonly string[];
  /** which headers the gateway adds (GATEHOUSE_HEADERS); Kong's default set when absent */
  headers?: GatewayHeaders;
  /** one JSON line per request; none when absent */
  accessLog?: AccessLog | null;
  /** the node's metrics: connection counts, and the series the `prometheus` plugin records */
  metrics?: DataPlaneMetrics;
}

export interface ServerStats {
  connections_accepted: number;
  connections_active: number;
  connections_handled: number;
  total_requests: number;
}

export interface DataPlaneServer {
  readonly server: Server;
  readonly holder: ConfigHolder;
  readonly forwarder: Forwarder;
  readonly host: string;
  readonly port: number;
  stats(): ServerStats;
  /** stops accepting; requests in flight get `graceMs` before their connections are cut */
  close(graceMs?: number): Promise<void>;
}

const defaultLogger: DataPlaneLogger = {
  error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`),
  warn: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...detail })}\n`),
};

function makeForwarder(choice: DataPlaneServerOptions['forwarder'], undici: UndiciForwarderOptions | undefined): Forwarder {
  if (choice === undefined || choice === 'undici') return new UndiciForwarder(undici);
  if (choice === 'http-proxy') return new HttpProxyForwarder();
  return choice;
}

/** Headers plugins set for the client's response; the response's own headers win over them. */
function applyResponseHeaders(res: ServerResponse, ex: Exchange): void {
  const extra = ex.responseHeaders;
  if (extra !== null) for (const [name, value] of extra) res.setHeader(name, value);
}

function isThenable(value: unknown): value is PromiseLike<ChainOutcome> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/** The path of an absolute-form request target (`http://host/path?q`), with its query. */
function originForm(url: string): string {
  if (url.charCodeAt(0) === 47 /* / */ || !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** The path of a request the router refused (for its log line). */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Where a request that matched a route over the wrong scheme goes: 426, or a redirect to https. */
function httpsRequired(status: number, req: IncomingMessage): FixedResponse {
  if (status === 426) return ProxyErrors.useHttps;
  const location = `https://${req.headers.host ?? ''}${req.url ?? '/'}`;
  return { status, body: Buffer.alloc(0), headers: { location, 'content-length': '0' } };
}

/**
 * The proxy listener: route, run the plugin chain, forward. Each request reads the holder's config once and uses
 * that object to its end.
 */
export async function createDataPlaneServer(options: DataPlaneServerOptions): Promise<DataPlaneServer> {
  const { holder } = options;
  const log = options.log ?? defaultLogger;
  const runtime: PluginRuntime = options.runtime ?? {};
  if (options.metrics) runtime.exchangeMetrics = options.metrics.exchange;
  const gatewayHeaders = options.headers ?? defaultGatewayHeaders();
  const observer = new ExchangeObserver(options.accessLog ?? null, log);
  const forwarder = makeForwarder(options.forwarder, options.undici);
  const upgrades = new UpgradeRelay();
  const scheme = options.tls ? 'https' : 'http';
  const stats: ServerStats = { connections_accepted: 0, connections_active: 0, connections_handled: 0, total_requests: 0 };
  const trusted = options.trustedIps && options.trustedIps.length > 0 ? new TrustedProxies(options.trustedIps) : null;
  const clientIpOf = trusted === null ? peerAddress : (req: IncomingMessage) => trusted.clientIp(req);

  /** Routes a request against the current configuration: the exchange to run, or the gateway's own answer. */
  function admit(req: IncomingMessage, trace: ExchangeTrace | null = null): Exchange | FixedResponse {
    const config: CompiledConfig = holder.current;
    const url = originForm(req.url ?? '/');
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const match = config.router.match(req.method ?? 'GET', req.headers.host, path, req.headers);
    if (match === null) return ProxyErrors.noRoute;
    const route = match.route;
    if (scheme === 'http' ? !route.acceptsHttp : !route.acceptsHttps) {
      return scheme === 'http' && route.acceptsHttps ? httpsRequired(route.httpsRedirectStatus, req) : ProxyErrors.noRoute;
    }
    const ex = new Exchange(req, path, q < 0 ? '' : url.slice(q + 1), scheme, clientIpOf(req), config, route, match.matched, runtime);
    if (trusted !== null && trusted.trusts(peerAddress(req))) ex.fromTrustedProxy = true;
    ex.trace = trace;
    return ex;
  }

  function failed(what: string, err: unknown, trace?: ExchangeTrace): void {
    log.error(what, { error: err instanceof Error ? err.message : String(err), ...(trace ? { request_id: trace.requestId } : {}) });
  }

  function forward(req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
    const target = ex.compiledRoute.upstream;
    if (target === null) {
      applyResponseHeaders(res, ex);
      stampGatewayResponse(res, ex.trace);
      return sendFixed(res, ProxyErrors.noService);
    }
    const upstream = buildUpstreamRequest(ex, target);
    ex.trace?.sent(upstream.path, target);
    forwarder.forward(req, res, upstream);
  }

  function answer(res: ServerResponse, ex: Exchange, response: PluginResponse): void {
    applyResponseHeaders(res, ex);
    stampGatewayResponse(res, ex.trace);
    sendPluginResponse(res, response);
  }

  /** the gateway's own answer after a failure: stamped like any response it makes */
  function unexpected(res: ServerResponse, trace: ExchangeTrace): void {
    stampGatewayResponse(res, trace);
    sendFixed(res, ProxyErrors.unexpected);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    stats.total_requests++;
    const trace = new ExchangeTrace(req, gatewayHeaders);
    try {
      const admitted = admit(req, trace);
      if (!(admitted instanceof Exchange)) {
        observer.watch(trace, res, null, pathOf(req), '');
        stampGatewayResponse(res, trace);
        return sendFixed(res, admitted);
      }
      observer.watch(trace, res, admitted, admitted.path, admitted.rawQuery);
      const chain = admitted.compiledRoute.chain;
      if (chain.length === 0) return forward(req, res, admitted);
      const outcome = runChain(admitted, chain, admitted.config.consumers, log);
      if (outcome === null) return forward(req, res, admitted);
      if (!isThenable(outcome)) return answer(res, admitted, outcome);
      outcome.then(
        (settled) => {
          try {
            if (settled === null) forward(req, res, admitted);
            else answer(res, admitted, settled);
          } catch (err) {
            failed('request failed', err, trace);
            unexpected(res, trace);
          }
        },
        (err: unknown) => {
          failed('request failed', err, trace);
          unexpected(res, trace);
        },
      );
    } catch (err) {
      failed('request failed', err, trace);
      unexpected(res, trace);
    }
  }

  /** Upgrades (WebSocket) take the same route and plugins; answers are written on the raw socket. */
  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    stats.total_requests++;
    socket.on('error', () => socket.destroy());
    const answerFixed = (r: FixedResponse) => sendOnSocket(socket as Socket, r.status, r.headers, r.body);
    const answerPlugin = (response: PluginResponse, ex: Exchange) => {
      const rendered = renderPluginResponse(response);
      if (ex.responseHeaders !== null) for (const [name, value] of ex.responseHeaders) rendered.headers[name] ??= value;
      sendOnSocket(socket as Socket, rendered.status, rendered.headers, rendered.body);
    };
    const proceed = (ex: Exchange) => {
      const target = ex.compiledRoute.upstream;
      if (target === null) return answerFixed(ProxyErrors.noService);
      upgrades.relay(req, socket, head, buildUpstreamRequest(ex, target, true));
    };
    const settle = (outcome: ChainOutcome, ex: Exchange) => (outcome === null ? proceed(ex) : answerPlugin(outcome, ex));
    try {
      const admitted = admit(req);
      if (!(admitted instanceof Exchange)) return answerFixed(admitted);
      const outcome = runChain(admitted, admitted.compiledRoute.chain, admitted.config.consumers, log);
      if (!isThenable(outcome)) return settle(outcome, admitted);
      outcome.then(
        (settled) => settle(settled, admitted),
        (err: unknown) => {
          failed('upgrade failed', err);
          answerFixed(ProxyErrors.unexpected);
        },
      );
    } catch (err) {
      failed('upgrade failed', err);
      answerFixed(ProxyErrors.unexpected);
    }
  }

  const server = options.tls ? createHttpsServer(options.tls, onRequest) : createServer(onRequest);
  server.keepAliveTimeout = options.keepAliveTimeout ?? 60_000;
  server.headersTimeout = server.keepAliveTimeout + 5_000;
  server.on('upgrade', onUpgrade);
  server.on('connection', (socket: Socket) => {
    stats.connections_accepted++;
    stats.connections_handled++;
    stats.connections_active++;
    socket.once('close', () => stats.connections_active--);
  });
  server.on('clientError', (_err, socket: Duplex) => {
    if ((socket as Socket).writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  // pools of upstreams that left the configuration are closed once their requests finish
  const stopPruning = holder.onSwap((next) => {
    if (!forwarder.prune) return;
    const active = new Set<string>();
    for (const route of next.routes) if (route.upstream) active.add(route.upstream.poolKey);
    forwarder.prune(active);
  });

  options.metrics?.observeServer(() => ({ ...stats }));
  if (options.accessLog) options.metrics?.observeAccessLog(() => options.accessLog!.dropped);

  const address = await listenOn(server, options.listen);
  return {
    server,
    holder,
    forwarder,
    host: address.address,
    port: address.port,
    stats: () => ({ ...stats }),
    async close(graceMs = 0) {
      stopPruning();
      await closeServer(server, graceMs);
      upgrades.close();
      await forwarder.close();
    },
  };
}
