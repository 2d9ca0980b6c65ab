import type { Cluster, Redis } from 'ioredis';

/** A connection to one Redis (possibly found through Sentinel) or to a Redis Cluster: the commands are the same. */
export type RedisClient = Redis | Cluster;
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { AppliedChange, ConfigRow, Consumer, EntityDefinition, Route, Service, SnapshotConfig } from '@gatehouse/core';
import type { TokenStore as OAuth2TokenStore } from './oauth2/token-store';
import type { CacheStore } from './proxy-cache/stores';
import type { PluginQueues } from './shared/plugin-queues';
import type { PeriodLimit, Tally } from './rate-limiting/tally';
import type { RequestSpans, TracingSettings } from './shared/tracing/request-spans';

/** The credential that authenticated a request; `identifier` becomes `x-credential-identifier`. */
export interface CredentialRef {
  id: string | null;
  identifier: string;
  consumerId: string | null;
}

/** A read-only view of the client request, as plugins see it. */
export interface PluginRequest {
  readonly method: string;
  /** path without query string, normalised (kong-reference decision 12): the path the route matched */
  readonly path: string;
  /** lower-cased header names; repeated headers as arrays */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * the headers exactly as received, `[name, value, name, value, …]`, when the caller has them (the data plane does).
   * Node joins repeated custom headers with ", " in `headers`; this list tells one header with a comma from two headers.
   */
  readonly rawHeaders?: readonly string[];
  /** parsed query string, in original order */
  readonly query: URLSearchParams;
  /**
   * the query string exactly as received, without its `?` ('' when none), when the caller has it (the data plane
   * does). Signatures over the request line (hmac-auth) need the client's own encoding, which `query` re-encodes.
   */
  readonly rawQuery?: string;
  readonly clientIp: string;
  /** "http" or "https" as seen by the gateway (a trusted X-Forwarded-Proto may say https) */
  readonly scheme: string;
  /**
   * the connection came from a trusted proxy (the data plane's `trustedIps`, Kong's `trusted_ips`), so its
   * X-Forwarded-* headers may be believed (oauth2's `accept_http_if_already_terminated`); absent means not trusted
   */
  readonly fromTrustedProxy?: boolean;
  /** the client's HTTP version as `major.minor` (`1.0`, `1.1`, `2.0`), when the caller knows it */
  readonly httpVersion?: string;
  /**
   * the client connection as nginx describes it (`$server_addr`, `$server_port`, `$connection`,
   * `$connection_requests`), when the caller knows it
   */
  readonly connection?: RequestConnection;
  /** the port of the listener the request came in on (Kong's `kong.request.get_port()`), when the caller knows it */
  readonly serverPort?: number;
  /** the groups the route's regex path captured (Kong's `kong.request.get_uri_captures()`), when the caller knows them */
  readonly uriCaptures?: { readonly whole?: string; readonly unnamed: ReadonlyArray<string | null>; readonly named: Readonly<Record<string, string>> };
  /** buffers the request body once and returns it; later reads get the same bytes */
  readBody(): Promise<Buffer>;
}

export interface RequestConnection {
  /** the gateway's own address and port on this connection */
  localAddress: string;
  localPort: number;
  /** the connection's serial number in this process, and the requests it carried so far, this one included */
  serial: number;
  requests: number;
}

/** Changes to what goes upstream. */
export interface UpstreamChanges {
  /** sets a header for the upstream, replacing the client's of that name (any case); it goes upstream spelled as given */
  setHeader(name: string, value: string): void;
  /** sets a header for the upstream sent once per value (request-transformer's `append`) */
  setHeaderValues?(name: string, values: readonly string[]): void;
  removeHeader(name: string): void;
  /**
   * removes one query argument by exact name, keeping the others in order; as Kong's `clear_query_arg`, the forwarded
   * query string is then the remaining arguments serialised again (form-urlencoded), not the client's bytes
   */
  removeQueryArg(name: string): void;
  /** replaces the forwarded body (e.g. hide_credentials with key_in_body) */
  setBody(body: Buffer, contentType?: string): void;
  /**
   * a header as it will be forwarded: the client's, unless a plugin set or removed it (lower-case name). Absent on
   * contexts that do not forward anything.
   */
  forwardedHeader?(name: string): string | readonly string[] | undefined;
  /**
   * the query string as it will be forwarded, as an editable list: changes to it are what goes upstream. Created on
   * first use from the client's query.
   */
  forwardedQuery?(): URLSearchParams;
  /** changes the method sent upstream (request-transformer's `http_method`) */
  setMethod?(method: string): void;
  /** replaces the path sent upstream, before the service path is added (request-transformer's `replace.uri`) */
  setPath?(path: string): void;
  /**
   * passes the client's body through `wrap` on its way upstream, as it streams (counting, limiting): nothing is
   * buffered. A wrapper that fails with a `RequestRefused` has the gateway answer the refusal's response, as long as
   * nothing was sent to the client yet. `readBody` reads through the wrappers too.
   */
  pipeBody?(wrap: (body: Readable) => Readable): void;
}

/**
 * Thrown (or used as a stream error) to stop a request with a response of the plugin's choosing, from places that
 * cannot return one: a body stream past its size limit, a bounded `readBody`.
 */
export class RequestRefused extends Error {
  constructor(readonly response: PluginResponse) {
    super(typeof (response.body as { message?: unknown } | null)?.message === 'string' ? (response.body as { message: string }).message : `refused with ${response.status}`);
  }
}

/** The upstream's response once its status and headers are known and nothing has been sent to the client yet. */
export interface UpstreamResponse {
  /** the status the client gets; a hook may change it (response-ratelimiting's 429 once the upstream spent a limit) */
  status: number;
  /** lower-case names; repeated headers as arrays; hooks edit it in place */
  readonly headers: Record<string, string | string[]>;
  /**
   * names of the headers in `headers` that plugins set for this request's client response (`ctx.response`), not the
   * upstream; a cache stores the upstream's own headers and lets the next request's plugins set theirs again
   */
  readonly setByPlugins?: ReadonlySet<string>;
  /** the upstream's own values of the headers in `setByPlugins` that it sent too, which the plugins' values replaced */
  readonly replaced?: Readonly<Record<string, string | string[]>>;
  /**
   * asks for the whole body before anything is sent; `transform` returns the body to send instead. The body is
   * buffered up to the gateway's buffered-body limit; past it, the response passes unchanged. A transform may answer
   * with a promise (it asks another service): the response waits for it; a rejected one leaves the body as it was.
   */
  transformBody(transform: (body: Buffer) => Buffer | Promise<Buffer>): void;
  /** changes the status sent to the client; only takes effect together with `transformBody` (the head waits then) */
  setStatus?(status: number): void;
  /**
   * asks for a copy of the body once it has streamed through; the response still streams. Past the buffered-body
   * limit `capture` is not called. A promise returned by `capture` holds the end of the response until it settles,
   * so what it stores (a cache entry in a store another process holds) is in place when the client sees the end.
   */
  captureBody(capture: (body: Buffer) => void | Promise<unknown>): void;
  /**
   * passes the body through `wrap` as it streams to the client, nothing buffered (Kong's body_filter chunk by chunk:
   * grpc-web's reframing, grpc-gateway's JSON). `trailers` reads the upstream's trailers once the body has ended.
   * Present where the forwarder can stream a transform (gRPC services); absent elsewhere.
   */
  streamBody?(wrap: (body: Readable, trailers: ResponseTrailers) => Readable): void;
}

/** The upstream's trailers as a streamed body transform sees them at its end. */
export interface ResponseTrailers {
  /**
   * the trailers (lower-case names; a gRPC answer without a body has its `grpc-status` and `grpc-message` in its head,
   * and those are given); taking them keeps them from the client's HTTP trailers (they went into the body)
   */
  take(): Readonly<Record<string, string>>;
}

/** A response produced by a plugin instead of proxying. */
export interface PluginResponse {
  status: number;
  /** JSON-serialised when an object; sent raw when a string or Buffer; relayed as it comes when a Readable; empty when null */
  body: unknown;
  headers?: Record<string, string>;
  /** Set-Cookie lines sent besides `headers`, one header each (session's logout removes two cookies) */
  setCookies?: readonly string[];
  /**
   * the answer stands for the upstream's (a proxy-cache hit): the gateway stamps it as a proxied response
   * (`X-Kong-Proxy-Latency`, `X-Kong-Upstream-Latency`, `Via`) rather than as its own
   */
  proxied?: boolean;
}

export type AuthResult =
  | { ok: true; consumer: Consumer | null; credential: CredentialRef }
  | { ok: false; response: PluginResponse };

/** Per-request state shared with plugins; `consumer`/`credential` are what authentication decided so far. */
export interface PluginContext<Index = unknown> {
  readonly req: PluginRequest;
  readonly upstream: UpstreamChanges;
  readonly route: Route | null;
  readonly service: Service | null;
  readonly consumer: Consumer | null;
  readonly credential: CredentialRef | null;
  readonly anonymous: boolean;
  /** what this plugin's `compile` built for the current snapshot */
  readonly index: Index;
  /** services a plugin may need at request time (Redis, token store); absent ones are undefined */
  readonly runtime: PluginRuntime;
  /** the id of the plugin configuration whose hook is running (the data plane sets it; e.g. rate-limiting's counters) */
  readonly pluginId?: string;
  /** headers for the response the client gets, whoever produces it (absent where there is no client response) */
  readonly response?: ResponseChanges;
  /**
   * top-level values added to this request's log entries (Kong's `kong.log.set_serialize_value`), e.g. correlation-id's
   * `correlation_id`; absent where there is no proxied request
   */
  readonly logValues?: Map<string, unknown>;
  /**
   * per-request values a plugin keeps between its hooks (e.g. proxy-cache's key from `access` to `response`), by the
   * plugin's own key; absent where there is no proxied request
   */
  readonly locals?: Map<string, unknown>;
  /**
   * the request's spans when tracing instrumentations are on (GATEHOUSE_TRACING_INSTRUMENTATIONS); null or absent when
   * they are off, and tracing plugins only propagate headers
   */
  readonly spans?: RequestSpans | null;
}

/** Changes to the response sent to the client: the upstream's, a plugin's or the gateway's own. */
export interface ResponseChanges {
  /** sets a header, replacing one of the same name the upstream sent */
  setHeader(name: string, value: string): void;
}

/** Where plugins report problems at request time. */
export interface PluginLogger {
  error(message: string, detail?: Record<string, unknown>): void;
  warn?(message: string, detail?: Record<string, unknown>): void;
}

/** Long-lived collaborators a data plane hands to plugins; filled by later plugins as they need them. */
export interface PluginRuntime {
  [service: string]: unknown;
  /**
   * the data plane's own Redis connection (the one REDIS_URL names), an ioredis client, for plugins whose state every
   * data plane must share (rate-limiting's `redis` policy without `config.redis.host`); absent without Redis
   */
  redis?: RedisClient;
  /** prefix of every key plugins write through `redis` ('' when absent); tests give each run a unique one */
  redisPrefix?: string;
  /** where plugins log; JSON lines on stderr when absent */
  log?: PluginLogger;
  /** the node's log level now, in Kong's names (`debug` … `emerg`); absent, every level counts */
  logLevel?: () => string;
  /**
   * where oauth2 keeps its tokens and authorization codes, shared with the control plane's `/oauth2_tokens`: a
   * `MemoryTokenStore` in embedded mode; absent, oauth2 uses Redis through `redis` (keys under `<redisPrefix>oauth2:`)
   */
  oauth2Tokens?: OAuth2TokenStore;
  /**
   * proxy-cache's `memory` strategy: this data plane's cache, shared by every proxy-cache configuration. The node
   * creates it (so its control plane, in embedded mode, can purge it): a `MemoryCacheStore`, or, in a proxy worker,
   * the primary's one reached over IPC; absent, the plugin makes one per runtime.
   */
  proxyCacheMemory?: CacheStore;
  /** the most a data plane buffers of a body (request or response), in bytes; `DEFAULT_MAX_BUFFERED_BODY` when absent */
  maxBufferedBody?: number;
  /** where the `prometheus` plugin records per-request series (the data plane's metrics); absent, it records nothing */
  exchangeMetrics?: ExchangeMetricsSink;
  /**
   * rate-limiting's `local` counters when they are the node's and not this process's (a data plane running several
   * proxy workers keeps one set in its primary); absent, the plugin counts in this process
   */
  rateLimitCounters?: RateLimitCounterStore;
  /** the data plane's node id (Kong's `kong.node.get_id()`), for tracing plugins' resource and tags; absent in tests */
  nodeId?: string;
  /** the data plane's tracing settings (Kong's tracing_instrumentations, tracing_sampling_rate); absent means off */
  tracing?: TracingSettings;
  /**
   * the node's batching queues (Kong's `kong.tools.queue`), shared by every logging plugin configuration of this
   * process; plugins reach them through `queuesFor(runtime)`
   */
  queues?: PluginQueues;
  /** where the `syslog` plugin sends: a unix datagram socket's path (`/dev/log` when absent) or `udp://host:port` */
  syslogAddress?: string;
}

/** Where the `local` policy counts: `take` counts one request in every period unless one is at its limit. */
export interface RateLimitCounterStore {
  take(key: string, limits: readonly PeriodLimit[]): Tally | Promise<Tally>;
  /** the counts under `key`, counting nothing (response-ratelimiting); absent, that plugin counts in its process */
  peek?(key: string, limits: readonly PeriodLimit[]): number[] | Promise<number[]>;
  /** adds `amount` under `key` in every period (response-ratelimiting) */
  add?(key: string, limits: readonly PeriodLimit[], amount: number): void | Promise<void>;
}

/**
 * What happened in one finished exchange, handed to `log` hooks once the response is done. Latencies are whole
 * milliseconds; `proxy` is -1 when no upstream answered (Kong's `latencies.proxy`).
 */
export interface ExchangeSummary {
  /** the gateway's request id (`X-Kong-Request-Id`) */
  requestId: string;
  /** epoch milliseconds the request arrived */
  startedAt: number;
  clientIp: string;
  method: string;
  /** scheme, host and path as the client asked (`http://host/path?query`) */
  url: string;
  /** path the gateway routed on, and the raw query string ('' when none) */
  path: string;
  rawQuery: string;
  requestHeaders: Readonly<Record<string, string | string[] | undefined>>;
  /** bytes received for this request (head and body) */
  requestSize: number;
  status: number;
  responseHeaders: Readonly<Record<string, string | string[] | number | undefined>>;
  /** bytes sent for this response (head and body) */
  responseSize: number;
  /** `service` when the upstream produced the response, `kong` when the gateway or a plugin did */
  source: 'service' | 'kong';
  latencies: { kong: number; proxy: number; request: number };
  route: Route | null;
  service: Service | null;
  consumer: Consumer | null;
  credential: CredentialRef | null;
  /** path and query sent upstream, null when nothing was proxied */
  upstreamUri: string | null;
  /** the upstream address tried, null when nothing was proxied */
  upstreamTarget: { host: string; port: number } | null;
  /** the client got the whole response (false: the connection closed first) */
  completed: boolean;
  /** values plugins added for the log entries (`PluginContext.logValues`); absent or null when none */
  logValues?: ReadonlyMap<string, unknown> | null;
}

/** Receives per-request series from the `prometheus` plugin; the flags are the plugin's config. */
export interface ExchangeMetricsSink {
  record(summary: ExchangeSummary, flags: { per_consumer: boolean; status_code_metrics: boolean; latency_metrics: boolean; bandwidth_metrics: boolean; ai_metrics?: boolean }): void;
  /** a finished stream session, for Kong's stream series (`kong_stream_sessions_total`, `kong_session_duration_ms`) */
  recordSession?(session: StreamSessionSummary, flags: { status_code_metrics: boolean; latency_metrics: boolean }): void;
}

/** How a credential is written. */
export interface PrepareOptions {
  /**
   * false when a declarative document says `_transform: false` (Kong's exports): values are stored as given, already
   * transformed (a basic-auth password is Kong's stored digest, not the password)
   */
  transform?: boolean;
}

/** A credential entity owned by a plugin, with its admin paths and write hooks. */
export interface CredentialEntity extends EntityDefinition {
  /** path under a consumer, e.g. `key-auth` for /consumers/{c}/key-auth */
  consumerPath: string;
  /** turns admin input into what is stored (generate a key, hash a password); runs before validation of uniques */
  prepare?: (entity: Record<string, unknown>, previous: Record<string, unknown> | null, options?: PrepareOptions) => Promise<Record<string, unknown>> | Record<string, unknown>;
}

/** A credential entity's declared index as the data plane builds it and follows deltas with it (`declareIndex`). */
export interface FollowedIndex<Index> {
  entity: CredentialEntity;
  /** lookup name → the row field it is keyed by */
  keyedBy: Readonly<Record<string, string>>;
  compile(config: SnapshotConfig): Index;
  /** `consumers` and the entity's section */
  indexSections: readonly string[];
  /** `rows` looks up the configuration after the delta */
  updateIndex(index: Index, changes: readonly AppliedChange[], rows: (section: string, id: string) => ConfigRow | undefined): boolean;
}

/** What a plugin opened for one data-plane node (connections, files, stores); the node closes it when it stops. */
export interface PluginResources {
  close(): void | Promise<void>;
}

export interface PluginDefinition<Config = unknown, Index = unknown> {
  /** Kong's plugin name */
  name: string;
  /** Kong 3.x priority: higher runs first */
  priority: number;
  version: string;
  /** the config record; validation, defaults, OpenAPI and /schemas/plugins/{name} come from it */
  configSchema: z.ZodObject;
  /** an authentication plugin: its outcome is combined by run-chain (AND / OR + anonymous) */
  auth: boolean;
  /** may not be scoped to a consumer (every auth plugin) */
  noConsumer: boolean;
  /** credential entities stored by the control plane and shipped in the snapshot */
  entities?: CredentialEntity[];
  /**
   * cross-field checks on the config; returns errors or null. Keys: `@entity` (reported at the top level, like Kong's
   * plugin entity checks), `@config` (a message about the config record as a whole), `@record` (an entity check of
   * the config record, reported as `config['@entity']`), or a config field name
   */
  checkConfig?: (config: Config) => Record<string, string | string[]> | null;
  /**
   * Kong's `shorthand_fields`: deprecated config fields that still load, rewritten onto their replacements before
   * validation (rate-limiting's `redis_host` → `redis.host`); returns the config to validate
   */
  shorthandFields?: (config: Record<string, unknown>) => Record<string, unknown>;
  /**
   * the index a credential entity declares (`declareIndex`: what it is keyed by, what an entry holds); `definePlugin`
   * makes it the plugin's `compile`, `indexSections` and `updateIndex`
   */
  credentialIndex?: FollowedIndex<Index>;
  /** builds lookups (e.g. key → credential) once per snapshot */
  compile?: (config: SnapshotConfig) => Index;
  /**
   * the snapshot sections `compile` reads (as delta keys: `consumers`, `credentials/keyauth_credentials`, `keys`, …):
   * a delta that touches none of them leaves the index as it is; one that does updates it (`updateIndex`) or has it
   * built again. Absent: every delta builds it again.
   */
  indexSections?: readonly string[];
  /**
   * updates the index in place for the rows a delta changed, so a write costs what it changed; `rows` looks up the
   * configuration after the delta. Returns false when it cannot, and the index is built again instead. Consumer rows
   * keep their objects across updates (their fields change in place).
   */
  updateIndex?: (index: Index, changes: readonly AppliedChange[], rows: (section: string, id: string) => ConfigRow | undefined) => boolean;
  /**
   * opens what the plugin keeps for one data-plane node (Redis connections, log writers, stores), given the node's
   * runtime; the node calls it once when it starts (`openPlugins`) and closes the result when it stops. Hooks find it
   * again through `ctx.runtime` (see `runtimeState`).
   */
  init?: (runtime: PluginRuntime) => PluginResources | Promise<PluginResources>;
  /**
   * auth plugins: try to authenticate; never decide AND/OR themselves. `null`: nothing to go on and nothing to refuse
   * (session without a session cookie): the chain goes on as if the plugin were not there.
   */
  authenticate?: (ctx: PluginContext<Index>, config: Config) => AuthResult | null | Promise<AuthResult | null>;
  /**
   * auth plugins that serve endpoints of their own (oauth2's `/oauth2/token`, `/oauth2/authorize`). When `matches` says
   * the request is for one of them, run-chain skips the plugin's `authenticate` and calls `serve` once every other
   * authentication plugin of the route has run, so under AND the others must authenticate the request first
   * (the interface document's rule 4), whatever the priorities.
   */
  endpoint?: {
    matches: (ctx: PluginContext<Index>, config: Config) => boolean;
    serve: (ctx: PluginContext<Index>, config: Config) => PluginResponse | Promise<PluginResponse>;
  };
  /**
   * Kong's rewrite phase: runs for the global configuration only (no route, service or consumer), whichever more
   * specific configuration of the same plugin the route has, before every access hook of the route's plugins, by
   * priority. A route-, service- or consumer-scoped configuration's rewrite hook never runs, as in Kong.
   */
  rewrite?: (ctx: PluginContext<Index>, config: Config) => PluginResponse | void | Promise<PluginResponse | void>;
  /** other plugins: inspect or answer the request */
  access?: (ctx: PluginContext<Index>, config: Config) => PluginResponse | void | Promise<PluginResponse | void>;
  /**
   * runs on the upstream's response, before anything is sent to the client (Kong's header_filter and body_filter), for
   * the plugins whose configuration ran on the request, in priority order. Plugins without it cost nothing.
   */
  response?: (ctx: PluginContext<Index>, config: Config, res: UpstreamResponse) => void;
  /**
   * end of the exchange (Kong's log phase): runs after the response finished, off the request path, for every request
   * that matched a route where this plugin applies, whatever answered it. Errors and rejections are logged, never seen
   * by the client. Chains without a `log` plugin pay nothing.
   */
  log?: (ctx: PluginContext<Index>, config: Config, summary: ExchangeSummary) => void | Promise<void>;
  /**
   * end of a stream session (Kong's log phase in its stream subsystem): a TCP, TLS or UDP session of a route where
   * this plugin applies, with Kong's stream log entry facts. Errors and rejections are logged.
   */
  streamLog?: (ctx: StreamPluginContext, config: Config, session: StreamSessionSummary) => void | Promise<void>;
}

/** What a plugin's `streamLog` hook reads of the session's context. */
export interface StreamPluginContext {
  readonly runtime: PluginRuntime;
  /** the id of the plugin configuration whose hook is running */
  readonly pluginId: string;
}

/** One finished stream session (TCP, TLS or UDP), as Kong's stream log serializer reads it. */
export interface StreamSessionSummary {
  /** epoch milliseconds the session was accepted */
  startedAt: number;
  clientIp: string;
  /** the listener's port */
  serverPort: number;
  /** nginx's stream status: 200 relayed, 403 refused, 502 the upstream failed, 503 no upstream to try */
  status: number;
  /** bytes from the client, and to it */
  received: number;
  sent: number;
  /** bytes from the upstream, and to it */
  upstreamReceived: number;
  upstreamSent: number;
  /** milliseconds from accept to the upstream's connection, and the whole session's */
  latencies: { kong: number; session: number };
  /** the terminated TLS connection's protocol and cipher; null on plain TCP and UDP */
  tls: { version: string; cipher: string } | null;
  route: Route | null;
  service: Service | null;
  /** the upstream address tried, null when none was */
  upstreamTarget: { host: string; port: number } | null;
}

export function definePlugin<Config, Index>(def: PluginDefinition<Config, Index>): PluginDefinition<Config, Index> {
  const declared = def.credentialIndex;
  return declared ? { ...def, compile: declared.compile, indexSections: declared.indexSections, updateIndex: declared.updateIndex } : def;
}
