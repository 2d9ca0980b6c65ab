import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_MAX_BUFFERED_BODY, type PluginRuntime, type TracingSettings } from '@gatehouse/plugins';
import { BalancerRegistry } from '../balancer/registry';
import type { ConfigHolder } from '../config-holder';
import { ExchangeObserver } from '../observe/exchange-end';
import { ExchangeTrace } from '../observe/exchange-trace';
import { defaultGatewayHeaders, type GatewayHeaders } from '../observe/gateway-headers';
import { startRequestSpans } from '../observe/request-spans';
import { Exchange } from '../pipeline/exchange';
import { peerAddress, TrustedProxies } from '../proxy/client-ip';
import { countRequest } from '../proxy/connection-count';
import type { Forwarder } from '../proxy/forwarder';
import { HttpProxyForwarder } from '../proxy/http-proxy-forwarder';
import { Http1Forwarder } from '../proxy/http1-forwarder';
import { setErrorDefaultType } from '../proxy/responses';
import { UndiciForwarder, type UndiciForwarderOptions } from '../proxy/undici-forwarder';
import { UpgradeRelay } from '../proxy/websocket';
import { GrpcForwarder } from '../grpc/grpc-forwarder';
import { admit } from './admission';
import { answerPlugin, answerRefusal, answerUnexpected, reportFailure } from './answers';
import { forward } from './forwarding';
import { handleInMemory, type MemoryRequest, type MemoryResponse } from './in-memory';
import type { DataPlaneLogger, DataPlaneServerOptions, ServerStats } from './options';
import { isPending, runPlugins, settleLater } from './plugin-chain';
import { pruneOnSwap } from './pool-pruning';
import { upgrade } from './upgrades';

/** What the pipeline needs of the server's options: all but where the listeners listen. */
export type PipelineOptions = Omit<DataPlaneServerOptions, 'listen' | 'tlsListen' | 'streamListen'>;

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

/**
 * The proxy's request walk and the state it runs on, one per server: every listener (plain, h2c, TLS) hands its
 * requests to `serve` and its upgrades to `upgrade`. The walk, each stage in its own file:
 *   admission (admission.ts) → plugin chain (plugin-chain.ts) → forwarding (forwarding.ts) | answers (answers.ts).
 * `handle` runs a request described in memory through the same walk, without a client socket (tests).
 */
export class ProxyPipeline {
  readonly holder: ConfigHolder;
  readonly log: DataPlaneLogger;
  /** long-lived services handed to plugins (ctx.runtime) */
  readonly runtime: PluginRuntime;
  readonly tracing: TracingSettings | undefined;
  readonly gatewayHeaders: GatewayHeaders;
  readonly observer: ExchangeObserver;
  /** one buffered-body limit (GATEHOUSE_MAX_BUFFERED_BODY) for request bodies, plugins' body phases and the forwarder */
  readonly bodyLimit: number;
  readonly forwarder: Forwarder;
  /** gRPC calls go upstream over HTTP/2 */
  readonly grpcForwarder = new GrpcForwarder();
  readonly upgrades = new UpgradeRelay();
  /** the balancers of the served upstreams; they follow the served config */
  readonly balancers: BalancerRegistry;
  readonly stats: ServerStats = { connections_accepted: 0, connections_active: 0, connections_handled: 0, total_requests: 0 };
  /** the proxies whose X-Forwarded-For is believed; null when none is */
  readonly trusted: TrustedProxies | null;
  readonly clientIpOf: (req: IncomingMessage) => string;
  readonly allowUnderscores: boolean;
  /** the TLS listener's port once it listens: where a redirect to https points */
  tlsPort: number | null = null;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(options: PipelineOptions) {
    const holder = (this.holder = options.holder);
    this.log = options.log ?? defaultLogger;
    const runtime: PluginRuntime = (this.runtime = options.runtime ?? {});
    if (options.metrics) runtime.exchangeMetrics = options.metrics.exchange;
    if (options.tracing) runtime.tracing = options.tracing;
    this.tracing = runtime.tracing;
    this.gatewayHeaders = options.headers ?? defaultGatewayHeaders();
    setErrorDefaultType(options.errorDefaultType ?? 'application/json');
    this.observer = new ExchangeObserver(options.accessLog ?? null, this.log);
    this.bodyLimit = options.maxBufferedBody ?? runtime.maxBufferedBody ?? DEFAULT_MAX_BUFFERED_BODY;
    runtime.maxBufferedBody = this.bodyLimit;
    this.forwarder = makeForwarder(options.forwarder, { maxBufferedBody: this.bodyLimit, ...options.undici });
    const trusted = (this.trusted = options.trustedIps && options.trustedIps.length > 0 ? new TrustedProxies(options.trustedIps, options.realIp ?? null) : null);
    this.clientIpOf = trusted === null ? peerAddress : (req: IncomingMessage) => trusted.clientIp(req);
    this.allowUnderscores = options.underscoreHeaders === true;
    const balancers = (this.balancers = new BalancerRegistry(options.balancer));
    balancers.update(holder.current.upstreams);
    // registered before the pool pruning, which reads the balancers
    this.unsubscribe.push(holder.onSwap((next) => balancers.update(next.upstreams)));
    // target health for `kong_upstream_target_health`, listed when scraped
    const stopHealthMetrics = options.metrics?.upstreamHealth.register(() => balancers.targetStates());
    if (stopHealthMetrics) this.unsubscribe.push(stopHealthMetrics);
    this.unsubscribe.push(pruneOnSwap(holder, balancers, this.forwarder, this.grpcForwarder));
    options.metrics?.observeServer(() => ({ ...this.stats }));
    if (options.accessLog) options.metrics?.observeAccessLog(() => options.accessLog!.dropped);
  }

  /** One request, from admission to its answer (or its hand-over to a forwarder). */
  serve(req: IncomingMessage, res: ServerResponse, scheme: string): void {
    this.stats.total_requests++;
    const trace = new ExchangeTrace(req, this.gatewayHeaders);
    if (this.tracing !== undefined) trace.spans = startRequestSpans(this.tracing, req, trace, scheme);
    const connectionCount = countRequest(req.socket);
    try {
      const admitted = admit(this, req, scheme, trace);
      if (!(admitted instanceof Exchange)) return answerRefusal(this.observer, req, res, admitted, trace);
      this.observer.watch(trace, res, admitted, admitted.path, admitted.rawQuery);
      admitted.connectionCount = connectionCount;
      const outcome = runPlugins(this, admitted);
      if (outcome === null) return forward(this, req, res, admitted);
      if (!isPending(outcome)) return answerPlugin(res, admitted, outcome);
      settleLater(this, req, res, admitted, outcome, trace);
    } catch (err) {
      reportFailure(this.log, 'request failed', err, trace);
      answerUnexpected(res, trace);
    }
  }

  /** An upgrade (WebSocket): the same admission and plugins, then relayed (upgrades.ts). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, scheme: string): void {
    upgrade(this, req, socket, head, scheme);
  }

  /** A request described in memory, served by `serve` without a client socket; resolves with the response (in-memory.ts). */
  handle(request: MemoryRequest): Promise<MemoryResponse> {
    return handleInMemory(this, request);
  }

  /** Stops following config swaps (balancers, pool pruning, health metrics) and closes the balancers. */
  stopFollowingConfig(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.balancers.close();
  }

  /** Closes the upgrades in flight and the forwarders' pools (after the listeners closed). */
  async closeUpstreams(): Promise<void> {
    this.upgrades.close();
    await Promise.all([this.forwarder.close(), this.grpcForwarder.close()]);
  }

  async close(): Promise<void> {
    this.stopFollowingConfig();
    await this.closeUpstreams();
  }
}
