import type { Server } from 'node:http';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Http2SecureServer } from 'node:http2';
import type { PluginRuntime, TracingSettings } from '@gatehouse/plugins';
import type { BalancerRegistry, BalancerRegistryOptions } from '../balancer/registry';
import type { ConfigHolder } from '../config-holder';
import type { ListenAddress } from '../listen';
import type { DataPlaneMetrics } from '../metrics/data-plane-metrics';
import type { AccessLog } from '../observe/access-log';
import type { GatewayHeaders } from '../observe/gateway-headers';
import type { ChainLogger } from '../pipeline/run-chain';
import type { ErrorBodyType } from '../proxy/error-bodies';
import type { Forwarder, ForwarderKind } from '../proxy/forwarder';
import type { UndiciForwarderOptions } from '../proxy/undici-forwarder';
import type { StreamStats } from '../stream/stream-counters';
import type { StreamListen } from '../stream/stream-proxy';
import type { PemPair } from '../tls/default-certificate';

// The proxy server's public shapes: what `createDataPlaneServer` takes and what it gives back.

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
  /** the plain listener's front lane for simple requests (default on; GATEHOUSE_FRONT_LANE); never with TLS or h2c */
  frontLane?: boolean;
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
