import type { ConfigState, Consumer, Route, Service } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { CompiledTls } from '../tls/compile-tls';
import type { UpstreamTls } from '../tls/upstream-tls';
import type { Router } from './router';
import type { UpstreamSpec } from '../balancer/spec';
import type { VaultResolver } from '../tls/vault-resolver';
import type { ScopedInstance } from './scope';

/** One enabled plugin configuration, validated and with its defaults filled. */
export interface PluginInstance {
  id: string;
  name: string;
  config: Record<string, unknown>;
  /** whether the plugin's `protocols` let it run on plain-HTTP / HTTPS requests */
  http: boolean;
  https: boolean;
}

/**
 * One plugin name in a route's chain. Which configuration runs is known ahead for auth plugins (they cannot be scoped
 * to a consumer) and, for the others, decided at request time from the consumer authentication chose.
 */
export interface ChainStep {
  plugin: PluginDefinition;
  /** the plugin's per-snapshot index (what its `compile` returned) */
  index: unknown;
  /** the most specific configuration without a consumer: route+service > route > service > global */
  base: PluginInstance | null;
  /** consumer id → most specific consumer-scoped configuration (route+service+consumer > route+consumer > service+consumer > consumer) */
  byConsumer: ReadonlyMap<string, PluginInstance> | null;
  /**
   * a step of Kong's rewrite phase: `base` is the plugin's global configuration and its `rewrite` hook runs (these
   * steps come first in the chain, by priority); false for the route's own steps (every step has the field, so the
   * request path reads steps of one shape)
   */
  rewrite: boolean;
}

/** Where a route's requests go, precomputed from its service. */
export interface UpstreamTarget {
  /** identifies the connection pool: origin plus the settings a pool is built with */
  poolKey: string;
  /** `http://host:port` */
  origin: string;
  protocol: 'http' | 'https';
  host: string;
  port: number;
  /** the Host header sent when the route does not preserve the client's */
  hostHeader: string;
  /** the service path, `/` when it has none */
  basePath: string;
  connectTimeout: number;
  readTimeout: number;
  writeTimeout: number;
  tlsVerify: boolean;
  /** the upstream (lower-case name) this service's host names: requests are balanced over its targets; else null */
  balancer: string | null;
  /** TLS server name when it differs from `host` (a balanced target's name, while `host` is its address) */
  sni?: string;
  /** TLS settings for an `https` upstream (verification, CAs, client certificate, SNI); null for plain HTTP */
  tls: UpstreamTls | null;
}

export interface CompiledRoute {
  route: Route;
  service: Service | null;
  /** null for a route without a service: 503 unless a plugin answers first */
  upstream: UpstreamTarget | null;
  /** plugins by priority, highest first (name breaks ties) */
  chain: readonly ChainStep[];
  /** the steps of `chain` whose plugin has a `log` hook (end of exchange); empty for most routes */
  logChain: readonly ChainStep[];
  stripPath: boolean;
  preserveHost: boolean;
  pathHandling: 'v0' | 'v1';
  acceptsHttp: boolean;
  acceptsHttps: boolean;
  /** a `grpc`/`grpcs` route: only gRPC requests (HTTP/2, `application/grpc…`) are proxied on it */
  grpc: boolean;
  /**
   * the service speaks gRPC (`grpc`/`grpcs`): requests go upstream over HTTP/2 whatever the route's protocols, as
   * Kong's `@grpc` location (grpc-web and grpc-gateway turn HTTP/1.1 requests into gRPC calls on `http` routes)
   */
  grpcUpstream: boolean;
  httpsRedirectStatus: number;
  /** Kong's request_buffering: the whole request body is read before the upstream request goes (Content-Length) */
  requestBuffering: boolean;
  /** Kong's response_buffering: the whole upstream response is read before the client is answered */
  responseBuffering: boolean;
}

export interface ConsumerDirectory {
  byId: ReadonlyMap<string, Consumer>;
  byUsername: ReadonlyMap<string, Consumer>;
}

/** A configuration problem that does not stop the snapshot from loading (e.g. a dangling `config.anonymous`). */
export interface CompileWarning {
  plugin_id: string;
  plugin: string;
  message: string;
}

/** The enabled configurations of one plugin name, by plugin id. */
export interface PluginGroup {
  def: PluginDefinition;
  candidates: Map<string, ScopedInstance>;
}

/** What applying a delta needs besides what the request path reads; shared by the configs a delta chain produces. */
export interface IncrementalParts {
  /** the configuration as rows (consumer rows are the objects the consumer directory and indexes hold) */
  state: ConfigState;
  groups: Map<string, PluginGroup>;
  vaults: VaultResolver;
  findPlugin: (name: string) => PluginDefinition | undefined;
  env: NodeJS.ProcessEnv;
  /** set when a delta failed half-way: the next one is refused, so the full snapshot is loaded */
  broken?: string;
}

/**
 * Everything the request path reads, built once per snapshot. A delta produces a new object: routes, chains and the
 * router are new when they change; the consumer directory and credential indexes are updated in place, in one
 * synchronous step, so no request sees half a delta.
 */
export interface CompiledConfig {
  /** false only for the placeholder served before any snapshot arrived */
  loaded: boolean;
  version: number;
  hash: string;
  /** epoch seconds the snapshot was built */
  createdAt: number;
  router: Router;
  routes: readonly CompiledRoute[];
  consumers: ConsumerDirectory;
  /** plugin name → what that plugin's `compile` built */
  indexes: ReadonlyMap<string, unknown>;
  warnings: readonly CompileWarning[];
  /** upstreams by lower-case name, with their targets (the balancers follow them across snapshots) */
  upstreams: ReadonlyMap<string, UpstreamSpec>;
  /** certificates by SNI and upstream TLS settings */
  tls: CompiledTls;
  /** absent on configs that cannot take deltas (the placeholder) */
  incremental?: IncrementalParts;
}
