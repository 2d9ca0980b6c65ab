import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { DEFAULT_MAX_BUFFERED_BODY, type PluginResponse, type PluginRuntime, type TracingSettings } from '@gatehouse/plugins';
import type { CompiledConfig, UpstreamTarget } from './compile/types';
import { BalancedRequest } from './balancer/balanced-request';
import { hashKeyOf } from './balancer/hash-key';
import { BalancerRegistry, type BalancerRegistryOptions } from './balancer/registry';
import type { ConfigHolder } from './config-holder';
import { closeServer, listenOn, type ListenAddress } from './listen';
import type { DataPlaneMetrics } from './metrics/data-plane-metrics';
import type { AccessLog } from './observe/access-log';
import { ExchangeObserver } from './observe/exchange-end';
import { ExchangeTrace, stampGatewayHeaders, stampGatewayResponse, stampStoredResponse } from './observe/exchange-trace';
import { defaultGatewayHeaders, type GatewayHeaders } from './observe/gateway-headers';
import { stageSpan, startRequestSpans } from './observe/request-spans';
import { Exchange } from './pipeline/exchange';
import { runChain, type ChainLogger, type ChainOutcome } from './pipeline/run-chain';
import { scrubClientHeaders } from './proxy/client-headers';
import { answerClientError } from './proxy/client-errors';
import { LingeringClose } from './proxy/lingering-close';
import { isForbiddenTarget } from './proxy/request-target';
import { connectionTimeouts } from './connection-timeouts';
import { peerAddress, TrustedProxies } from './proxy/client-ip';
import type { Forwarder, ForwarderKind } from './proxy/forwarder';
import { HttpProxyForwarder } from './proxy/http-proxy-forwarder';
import { Http1Forwarder } from './proxy/http1-forwarder';
import { normalizePath } from './proxy/normalize-path';
import { requestFacts } from './proxy/request-facts';
import { ProxyErrors, renderPluginResponse, sendFixed, sendOnSocket, sendPluginResponse, setErrorDefaultType, type FixedResponse } from './proxy/responses';
import type { ErrorBodyType } from './proxy/error-bodies';
import { UndiciForwarder, type UndiciForwarderOptions } from './proxy/undici-forwarder';
import { buildUpstreamRequest, type ResponseInterceptor } from './proxy/upstream-request';
import { bufferRequestBody } from './proxy/request-buffering';
import type { UpstreamResponse } from '@gatehouse/plugins';
import { UpgradeRelay } from './proxy/websocket';
import { countRequest } from './proxy/connection-count';
import { closeTlsListener, createTlsListener } from './tls/https-listener';
import { grpcRouteRefusal } from './grpc/grpc-admission';
import { GrpcForwarder } from './grpc/grpc-forwarder';
import { acceptH2c } from './grpc/h2c';
import { StreamProxy, type StreamListen } from './stream/stream-proxy';
import type { StreamStats } from './stream/stream-counters';
import type { PemPair } from './tls/default-certificate';

export interface DataPlaneLogger extends ChainLogger {
  warn?(message: string, detail?: Record<string, unknown>): void;
}

export interface DataPlaneServerOptions {
  holder: ConfigHolder;
  /** `host:port`, a port, or `{host, port}`; port 0 picks a free one */
  listen: ListenAddress;
  /** `http1` (default: the gateway's own HTTP/1.1 client, undici for the rest), `undici`, `http-proxy`, or a Forwarder of your own */
  forwarder?: Forwarder | ForwarderKind;
  undici?: UndiciForwarderOptions;
  /** long-lived services handed to plugins (ctx.runtime) */
  runtime?: PluginRuntime;
  log?: DataPlaneLogger;
  /** also take HTTP/2 in clear text (h2c) on the plain listener, as Kong's `http2` listen flag does (gRPC without TLS) */
  h2c?: boolean;
  /** Kong's stream listeners (GATEHOUSE_STREAM_LISTEN): TCP, TLS (`ssl`) and UDP (`udp`) for the stream routes */
  streamListen?: readonly StreamListen[];
  /** serve HTTPS instead of HTTP */
  tls?: HttpsServerOptions;
  /**
   * a second listener speaking TLS (1.2 and 1.3; HTTP/1.1 and HTTP/2 by ALPN) with the same routing, plugins and
   * forwarding; the certificate is chosen by SNI from the served config, else `defaultCertificate`
   */
  tlsListen?: ListenAddress | null;
  defaultCertificate?: PemPair;
  /** called with the SNI name of a handshake no certificate serves (the default one answers it): acme orders one */
  onDefaultCertificate?: (servername: string) => void;
  /** idle keep-alive time for client connections, HTTP/1.1 and HTTP/2 (ms); Kong's keepalive_timeout, 60 s */
  keepAliveTimeout?: number;
  /**
   * proxies (CIDR blocks or addresses) whose X-Forwarded-For names the client; from anyone else the socket address
   * is the client IP. Empty by default: no proxy is trusted.
   */
  trustedIps?: readonly string[];
  /** Kong's real_ip_header and real_ip_recursive (GATEHOUSE_REAL_IP_HEADER/_RECURSIVE); null: X-Forwarded-For, then X-Real-IP */
  realIp?: { header: string; recursive: boolean } | null;
  /** keep client headers whose names contain `_` (GATEHOUSE_UNDERSCORE_HEADERS=on); dropped by default */
  underscoreHeaders?: boolean;
  /** the most a plugin may buffer of a request body, in bytes (GATEHOUSE_MAX_BUFFERED_BODY; default 8 MiB) */
  maxBufferedBody?: number;
  /**
   * how long a client may take to send its request headers (ms) before it gets 408 and is closed (HTTP/2: GOAWAY and
   * close); Kong's client_header_timeout, 60 s
   */
  headersTimeout?: number;
  /** how long a client may take to send a whole request (ms) before it gets 408; Node's default (300 s) */
  requestTimeout?: number;
  /** how often the listeners look for clients past those timeouts (ms); a quarter of the shortest, at most 1 s */
  connectionsCheckingInterval?: number;
  /** upstream balancing: DNS resolver, active-check tick (a BalancerRegistry is made from these) */
  balancer?: BalancerRegistryOptions;
  /** which headers the gateway adds (GATEHOUSE_HEADERS); Kong's default set when absent */
  headers?: GatewayHeaders;
  /** the body type of the gateway's own errors when a request has no `Accept` (Kong's error_default_type); default JSON */
  errorDefaultType?: ErrorBodyType;
  /** one JSON line per request; none when absent */
  accessLog?: AccessLog | null;
  /** the node's metrics: connection counts, and the series the `prometheus` plugin records */
  metrics?: DataPlaneMetrics;
  /** tracing instrumentations and sampling rate (GATEHOUSE_TRACING_*); off when absent */
  tracing?: TracingSettings;
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
  /** the balancers of the served upstreams (health, DNS, manual health) */
  readonly balancers: BalancerRegistry;
  readonly host: string;
  readonly port: number;
  /** the TLS listener, when `tlsListen` was given */
  readonly tlsServer: Http2SecureServer | null;
  readonly tlsPort: number | null;
  /** the stream listeners' ports, in the order of `streamListen` */
  readonly streamPorts: readonly number[];
  stats(): ServerStats;
  /** the stream listeners' connections and sessions; null without stream listeners */
  streamStats(): StreamStats | null;
  /** stops accepting; requests in flight get `graceMs` before their connections are cut */
  close(graceMs?: number): Promise<void>;
}

const defaultLogger: DataPlaneLogger = {
  error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`),
  warn: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...detail })}\n`),
};

function makeForwarder(choice: DataPlaneServerOptions['forwarder'], undici: UndiciForwarderOptions | undefined): Forwarder {
  if (choice === undefined || choice === 'http1') return new Http1Forwarder(undici);
  if (choice === 'undici') return new UndiciForwarder(undici);
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

/** The TLS server name the client sent ('' when none). */
function serverNameOf(req: IncomingMessage): string {
  const name = (req.socket as Partial<TLSSocket>).servername;
  return typeof name === 'string' ? name : '';
}

/** The path of a request the router refused (for its log line). */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
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
 * The proxy listener: route, run the plugin chain, forward. Each request reads the holder's config once and uses
 * that object to its end.
 */
export async function createDataPlaneServer(options: DataPlaneServerOptions): Promise<DataPlaneServer> {
  const { holder } = options;
  const log = options.log ?? defaultLogger;
  const runtime: PluginRuntime = options.runtime ?? {};
  if (options.metrics) runtime.exchangeMetrics = options.metrics.exchange;
  if (options.tracing) runtime.tracing = options.tracing;
  const tracing = runtime.tracing;
  const gatewayHeaders = options.headers ?? defaultGatewayHeaders();
  setErrorDefaultType(options.errorDefaultType ?? 'application/json');
  const observer = new ExchangeObserver(options.accessLog ?? null, log);
  // one buffered-body limit (GATEHOUSE_MAX_BUFFERED_BODY) for request bodies, plugins' body phases and the forwarder
  const bodyLimit = options.maxBufferedBody ?? runtime.maxBufferedBody ?? DEFAULT_MAX_BUFFERED_BODY;
  runtime.maxBufferedBody = bodyLimit;
  const forwarder = makeForwarder(options.forwarder, { maxBufferedBody: bodyLimit, ...options.undici });
  // gRPC calls go upstream over HTTP/2
  const grpcForwarder = new GrpcForwarder();
  const upgrades = new UpgradeRelay();
  const plainScheme = options.tls ? 'https' : 'http';
  let tlsPort: number | null = null;
  const stats: ServerStats = { connections_accepted: 0, connections_active: 0, connections_handled: 0, total_requests: 0 };
  const trusted = options.trustedIps && options.trustedIps.length > 0 ? new TrustedProxies(options.trustedIps, options.realIp ?? null) : null;
  const clientIpOf = trusted === null ? peerAddress : (req: IncomingMessage) => trusted.clientIp(req);
  const allowUnderscores = options.underscoreHeaders === true;
  // balancers follow the served config; registered before the pool pruning below, which reads them
  const balancers = new BalancerRegistry(options.balancer);
  balancers.update(holder.current.upstreams);
  const stopBalancing = holder.onSwap((next) => balancers.update(next.upstreams));
  // target health for `kong_upstream_target_health`, listed when scraped
  const stopHealthMetrics = options.metrics?.upstreamHealth.register(() => balancers.targetStates()) ?? null;

  /**
   * Routes a request against the current configuration: the exchange to run, or the gateway's own answer. The path
   * is normalised here, once: the router matches it, plugins see it and the upstream request is built from it.
   */
  function admit(req: IncomingMessage, scheme: string, trace: ExchangeTrace | null = null): Exchange | FixedResponse {
    const config: CompiledConfig = holder.current;
    const target = req.url ?? '/';
    // a raw `\`, a control character or a space: refused before anything reads the target (decision 32)
    if (isForbiddenTarget(target)) return ProxyErrors.badRequest;
    scrubClientHeaders(req, allowUnderscores);
    const url = originForm(target);
    const q = url.indexOf('?');
    const path = normalizePath(q < 0 ? url : url.slice(0, q));
    if (path === null) return ProxyErrors.badRequest;
    const router = config.router;
    const routerSpan = stageSpan(trace?.spans, 'router', 'kong.router');
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
      return scheme === 'http' && route.acceptsHttps ? httpsRequired(route.httpsRedirectStatus, req, tlsPort) : ProxyErrors.noRoute;
    }
    const ex = new Exchange(req, path, q < 0 ? '' : url.slice(q + 1), scheme, clientIpOf(req), config, route, match.matched, runtime);
    if (trusted !== null && trusted.trusts(peerAddress(req))) ex.fromTrustedProxy = true;
    if (match.pattern !== undefined) ex.pathPattern = match.pattern;
    ex.bodyLimit = bodyLimit;
    ex.trace = trace;
    if (trace?.spans) trace.spans.root.attributes['http.client_ip'] = ex.clientIp;
    return ex;
  }

  function failed(what: string, err: unknown, trace?: ExchangeTrace): void {
    log.error(what, { error: err instanceof Error ? err.message : String(err), ...(trace ? { request_id: trace.requestId } : {}) });
  }

  /** Kong's request_buffering: the client's body is read whole first (not for gRPC, whose messages stream) */
  function forward(req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
    const buffering = ex.compiledRoute.requestBuffering && !ex.compiledRoute.grpc ? bufferRequestBody(ex, bodyLimit) : null;
    if (buffering === null) return send(req, res, ex);
    buffering
      .then(() => send(req, res, ex))
      .catch((err: unknown) => {
        failed('request failed', err);
        if (!res.headersSent) sendFixed(res, ProxyErrors.unexpected);
      });
  }

  function send(req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
    const target = ex.compiledRoute.upstream;
    if (target === null) {
      applyResponseHeaders(res, ex);
      stampGatewayResponse(res, ex.trace);
      return sendFixed(res, ProxyErrors.noService);
    }
    const hooks = ex.responseSteps === null ? null : responseHooksOf(ex);
    const via = ex.compiledRoute.grpc || ex.compiledRoute.grpcUpstream ? grpcForwarder : forwarder;
    if (target.balancer !== null) return forwardBalanced(req, res, ex, target, hooks, via);
    const upstream = buildUpstreamRequest(ex, target, false, hooks);
    ex.trace?.sent(upstream.path, target, ex.service?.host);
    via.forward(req, res, upstream);
  }

  /** The response hooks of the plugins that ran on the exchange, in order; a failing hook is logged and skipped. */
  function responseHooksOf(ex: Exchange): ResponseInterceptor {
    return (response: UpstreamResponse) => {
      for (const step of ex.responseSteps!) {
        ex.index = step.index;
        ex.pluginId = step.instance.id;
        const span = stageSpan(ex.spans, 'plugin_header_filter', `kong.header_filter.plugin.${step.instance.name}`);
        try {
          step.plugin.response!(ex, step.instance.config, response);
          if (span !== null) ex.spans!.endWhen(span);
        } catch (err) {
          if (span !== null) ex.spans!.endWhen(span);
          log.error('plugin response hook failed', { plugin_id: step.instance.id, plugin: step.instance.name, error: err instanceof Error ? err.message : String(err) });
        }
      }
    };
  }

  function noPeer(res: ServerResponse, ex: Exchange): void {
    applyResponseHeaders(res, ex);
    sendFixed(res, ProxyErrors.noHealthyTarget);
  }

  /** A service whose host names an upstream: pick an address (waiting only for a name's first DNS answer). */
  function forwardBalanced(req: IncomingMessage, res: ServerResponse, ex: Exchange, service: UpstreamTarget, hooks: ResponseInterceptor | null, via: Forwarder): void {
    const balancer = balancers.get(service.balancer!);
    if (balancer === undefined) return noPeer(res, ex);
    const key = hashKeyOf(balancer.spec, ex);
    const send = (): boolean => {
      const address = balancer.pick(key, null);
      if (address === null) return false;
      const attempt = new BalancedRequest(balancers, balancer, address, ex, service, key, ex.service?.retries ?? 5, hooks);
      const upstream = attempt.request();
      ex.trace?.sent(upstream.path, upstream.target, ex.service?.host);
      via.forward(req, res, upstream, attempt);
      return true;
    };
    if (send()) return;
    const pending = balancer.pending;
    if (pending.length === 0) return noPeer(res, ex);
    Promise.all(pending).then(
      () => {
        if (!send()) noPeer(res, ex);
      },
      () => noPeer(res, ex),
    );
  }

  /** the target an upgrade goes to: the service's, or an address of its upstream; null when none is available */
  function upgradeTarget(ex: Exchange, service: UpstreamTarget): UpstreamTarget | null {
    if (service.balancer === null) return service;
    const balancer = balancers.get(service.balancer);
    const address = balancer?.pick(hashKeyOf(balancer.spec, ex), null) ?? null;
    return address === null ? null : address.forwardTarget(service, balancer!.spec.hostHeader);
  }

  function answer(res: ServerResponse, ex: Exchange, response: PluginResponse): void {
    applyResponseHeaders(res, ex);
    if (response.proxied === true) stampStoredResponse(res, ex.trace);
    else stampGatewayResponse(res, ex.trace);
    sendPluginResponse(res, response);
  }

  /** the gateway's own answer after a failure: stamped like any response it makes, with the plugins' headers once they ran */
  function unexpected(res: ServerResponse, trace: ExchangeTrace, ex: Exchange | null = null): void {
    if (ex !== null && !res.headersSent) applyResponseHeaders(res, ex);
    stampGatewayResponse(res, trace);
    sendFixed(res, ProxyErrors.unexpected);
  }

  function handle(req: IncomingMessage, res: ServerResponse, scheme: string): void {
    stats.total_requests++;
    const trace = new ExchangeTrace(req, gatewayHeaders);
    if (tracing !== undefined) trace.spans = startRequestSpans(tracing, req, trace, scheme);
    const connectionCount = countRequest(req.socket);
    try {
      const admitted = admit(req, scheme, trace);
      if (!(admitted instanceof Exchange)) {
        observer.watch(trace, res, null, pathOf(req), '');
        stampGatewayResponse(res, trace);
        return sendFixed(res, admitted);
      }
      observer.watch(trace, res, admitted, admitted.path, admitted.rawQuery);
      admitted.connectionCount = connectionCount;
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
            unexpected(res, trace, admitted);
          }
        },
        (err: unknown) => {
          failed('request failed', err, trace);
          unexpected(res, trace, admitted);
        },
      );
    } catch (err) {
      failed('request failed', err, trace);
      unexpected(res, trace);
    }
  }

  // connections answered before their request's body was in end with a lingering close
  const lingering = new LingeringClose();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    lingering.track(req);
    handle(req, res, plainScheme);
  };

  /** Upgrades (WebSocket) take the same route and plugins; answers are written on the raw socket. */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, scheme: string): void {
    stats.total_requests++;
    socket.on('error', () => socket.destroy());
    const trace = new ExchangeTrace(req, gatewayHeaders);
    const answerFixed = (r: FixedResponse) => {
      const headers = { ...r.headers };
      stampGatewayHeaders(headers, trace);
      sendOnSocket(socket as Socket, r.status, headers, r.body);
    };
    const answerPlugin = (response: PluginResponse, ex: Exchange) => {
      const rendered = renderPluginResponse(response);
      if (ex.responseHeaders !== null) for (const [name, value] of ex.responseHeaders) rendered.headers[name] ??= value;
      stampGatewayHeaders(rendered.headers, trace);
      sendOnSocket(socket as Socket, rendered.status, rendered.headers, rendered.body);
    };
    const proceed = (ex: Exchange) => {
      const service = ex.compiledRoute.upstream;
      if (service === null) return answerFixed(ProxyErrors.noService);
      const target = upgradeTarget(ex, service);
      if (target === null) return answerFixed(ProxyErrors.noHealthyTarget);
      upgrades.relay(req, socket, head, buildUpstreamRequest(ex, target, true));
    };
    const settle = (outcome: ChainOutcome, ex: Exchange) => (outcome === null ? proceed(ex) : answerPlugin(outcome, ex));
    try {
      const admitted = admit(req, scheme, trace);
      if (!(admitted instanceof Exchange)) return answerFixed(admitted);
      const outcome = runChain(admitted, admitted.compiledRoute.chain, admitted.config.consumers, log);
      if (!isThenable(outcome)) return settle(outcome, admitted);
      outcome.then(
        (settled) => settle(settled, admitted),
        (err: unknown) => {
          failed('upgrade failed', err, trace);
          answerFixed(ProxyErrors.unexpected);
        },
      );
    } catch (err) {
      failed('upgrade failed', err, trace);
      answerFixed(ProxyErrors.unexpected);
    }
  }

  const timeouts = connectionTimeouts(options);
  const serverOptions = { connectionsCheckingInterval: timeouts.checkEvery };
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => upgrade(req, socket, head, plainScheme);
  const server = options.tls ? createHttpsServer({ ...options.tls, ...serverOptions }, onRequest) : createServer(serverOptions, onRequest);
  const h2cServer = options.h2c && !options.tls ? acceptH2c(server, (req, res) => handle(req, res, plainScheme)) : null;
  server.keepAliveTimeout = timeouts.keepAlive;
  server.headersTimeout = timeouts.clientHeader;
  server.requestTimeout = timeouts.request;
  server.on('upgrade', onUpgrade);
  // the socket Node's HTTP layer writes to: the TLS one when this listener serves HTTPS
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => lingering.adopt(socket));
  server.on('connection', (socket: Socket) => {
    stats.connections_accepted++;
    stats.connections_handled++;
    stats.connections_active++;
    socket.once('close', () => stats.connections_active--);
  });
  // 431 for headers past Node's size limit, 408 for a client too slow to send them, 400 for anything else
  server.on('clientError', answerClientError);

  // pools of upstreams that left the configuration are closed once their requests finish
  const stopPruning = holder.onSwap((next) => {
    const active = new Set<string>();
    for (const route of next.routes) {
      const service = route.upstream;
      if (!service) continue;
      if (service.balancer === null) {
        active.add(service.poolKey);
        continue;
      }
      const balancer = balancers.get(service.balancer);
      for (const address of balancer?.addresses ?? []) active.add(address.forwardTarget(service, balancer!.spec.hostHeader).poolKey);
    }
    forwarder.prune?.(active);
    grpcForwarder.prune(active);
  });

  options.metrics?.observeServer(() => ({ ...stats }));
  if (options.accessLog) options.metrics?.observeAccessLog(() => options.accessLog!.dropped);

  const address = await listenOn(server, options.listen);
  let tlsServer: Http2SecureServer | null = null;
  if (options.tlsListen != null) {
    if (!options.defaultCertificate) throw new Error('a TLS listener needs a default certificate');
    const listener = await createTlsListener({
      listen: options.tlsListen,
      defaultCertificate: options.defaultCertificate,
      sniLookup: (servername) => {
        const context = holder.current.tls.sni.lookup(servername);
        if (context === null && servername) options.onDefaultCertificate?.(servername);
        return context;
      },
      onRequest: (req, res) => handle(req, res, 'https'),
      onUpgrade: (req, socket, head) => upgrade(req, socket, head, 'https'),
      timeouts,
      lingering,
      onConnection: (socket) => {
        stats.connections_accepted++;
        stats.connections_handled++;
        stats.connections_active++;
        socket.once('close', () => stats.connections_active--);
      },
    }).catch(async (err: unknown) => {
      await closeServer(server, 0);
      throw err;
    });
    tlsServer = listener.server;
    tlsPort = listener.port;
  }
  const streams =
    options.streamListen && options.streamListen.length > 0
      ? await StreamProxy.start({ holder, balancers, listens: options.streamListen, defaultCertificate: options.defaultCertificate, log, trustedIps: options.trustedIps ?? [], runtime })
      : null;
  if (streams !== null) options.metrics?.observeStream(() => streams.counters.stats);
  return {
    server,
    holder,
    forwarder,
    balancers,
    host: address.address,
    port: address.port,
    tlsServer,
    tlsPort,
    streamPorts: streams?.ports ?? [],
    stats: () => ({ ...stats }),
    streamStats: () => (streams === null ? null : { ...streams.counters.stats }),
    async close(graceMs = 0) {
      stopPruning();
      stopBalancing();
      stopHealthMetrics?.();
      balancers.close();
      h2cServer?.close(graceMs);
      await streams?.close();
      await Promise.all([closeServer(server, graceMs), tlsServer ? closeTlsListener(tlsServer, graceMs) : null]);
      upgrades.close();
      await Promise.all([forwarder.close(), grpcForwarder.close()]);
    },
  };
}
