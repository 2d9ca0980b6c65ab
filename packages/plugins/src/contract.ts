import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { Consumer, EntityDefinition, Route, Service, SnapshotConfig } from '@gatehouse/core';
import type { TokenStore as OAuth2TokenStore } from './oauth2/token-store';

/** The credential that authenticated a request; `identifier` becomes `x-credential-identifier`. */
export interface CredentialRef {
  id: string | null;
  identifier: string;
  consumerId: string | null;
}

/** A read-only view of the client request, as plugins see it. */
export interface PluginRequest {
  readonly method: string;
  /** path without query string, as received */
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
  /** buffers the request body once and returns it; later reads get the same bytes */
  readBody(): Promise<Buffer>;
}

/** Changes to what goes upstream. */
export interface UpstreamChanges {
  setHeader(name: string, value: string): void;
  removeHeader(name: string): void;
  /** removes one query argument by exact name, keeping the others in order */
  removeQueryArg(name: string): void;
  /** replaces the forwarded body (e.g. hide_credentials with key_in_body) */
  setBody(body: Buffer, contentType?: string): void;
}

/** A response produced by a plugin instead of proxying. */
export interface PluginResponse {
  status: number;
  /** JSON-serialised when an object; sent raw when a string or Buffer; empty when null */
  body: unknown;
  headers?: Record<string, string>;
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
  redis?: Redis;
  /** prefix of every key plugins write through `redis` ('' when absent); tests give each run a unique one */
  redisPrefix?: string;
  /** where plugins log; JSON lines on stderr when absent */
  log?: PluginLogger;
  /**
   * where oauth2 keeps its tokens and authorization codes, shared with the control plane's `/oauth2_tokens`: a
   * `MemoryTokenStore` in embedded mode; absent, oauth2 uses Redis through `redis` (keys under `<redisPrefix>oauth2:`)
   */
  oauth2Tokens?: OAuth2TokenStore;
  /** where the `prometheus` plugin records per-request series (the data plane's metrics); absent, it records nothing */
  exchangeMetrics?: ExchangeMetricsSink;
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
}

/** Receives per-request series from the `prometheus` plugin; the flags are the plugin's config. */
export interface ExchangeMetricsSink {
  record(summary: ExchangeSummary, flags: { per_consumer: boolean; status_code_metrics: boolean; latency_metrics: boolean; bandwidth_metrics: boolean }): void;
}

/** A credential entity owned by a plugin, with its admin paths and write hooks. */
export interface CredentialEntity extends EntityDefinition {
  /** path under a consumer, e.g. `key-auth` for /consumers/{c}/key-auth */
  consumerPath: string;
  /** turns admin input into what is stored (generate a key, hash a password); runs before validation of uniques */
  prepare?: (entity: Record<string, unknown>, previous: Record<string, unknown> | null) => Promise<Record<string, unknown>> | Record<string, unknown>;
}

export interface PluginDefinition<Config = any, Index = unknown> {
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
   * plugin entity checks), `@config` (a message about the config record as a whole), or a config field name
   */
  checkConfig?: (config: Config) => Record<string, string | string[]> | null;
  /** builds lookups (e.g. key → credential) once per snapshot */
  compile?: (config: SnapshotConfig) => Index;
  /** auth plugins: try to authenticate; never decide AND/OR themselves */
  authenticate?: (ctx: PluginContext<Index>, config: Config) => AuthResult | Promise<AuthResult>;
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
  /** other plugins: inspect or answer the request */
  access?: (ctx: PluginContext<Index>, config: Config) => PluginResponse | void | Promise<PluginResponse | void>;
  /**
   * end of the exchange (Kong's log phase): runs after the response finished, off the request path, for every request
   * that matched a route where this plugin applies, whatever answered it. Errors and rejections are logged, never seen
   * by the client. Chains without a `log` plugin pay nothing.
   */
  log?: (ctx: PluginContext<Index>, config: Config, summary: ExchangeSummary) => void | Promise<void>;
}

export function definePlugin<Config, Index>(def: PluginDefinition<Config, Index>): PluginDefinition<Config, Index> {
  return def;
}
