import {
  ConfigState,
  flattenFieldErrors,
  REFERENCEABLE_PLUGIN_FIELDS,
  type FieldErrors,
  type Plugin,
  type Route,
  type Service,
  type Snapshot,
} from '@gatehouse/core';
import { findPlugin, type PluginDefinition } from '@gatehouse/plugins';
import { ConsumerLookup } from './consumer-lookup';
import { Router } from './router';
import { compileUpstreams, type UpstreamSpec } from '../balancer/spec';
import { resolveScope, scopeRank, type ScopedInstance } from './scope';
import { compileTls } from '../tls/compile-tls';
import type { UpstreamTls } from '../tls/upstream-tls';
import { resolveConfigReferences, VaultResolver } from '../tls/vault-resolver';
import type { ChainStep, CompiledConfig, CompiledRoute, CompileWarning, ConsumerDirectory, PluginGroup, PluginInstance, UpstreamTarget } from './types';

/** A snapshot that cannot be loaded; the last good configuration keeps serving. */
export class SnapshotCompileError extends Error {
  override readonly name = 'SnapshotCompileError';
}

export interface CompileOptions {
  /** where plugin names are looked up; the bundled plugins by default */
  findPlugin?: (name: string) => PluginDefinition | undefined;
  /** where `{vault://env/…}` references are resolved; this process's environment by default */
  env?: NodeJS.ProcessEnv;
}

const NO_STEPS: readonly ChainStep[] = Object.freeze([]);

function describe(plugin: Plugin): string {
  return `plugin '${plugin.name}' (${plugin.id})`;
}

function zodFieldErrors(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): FieldErrors {
  const fields: FieldErrors = {};
  for (const issue of issues) {
    const key = issue.path.map(String).join('.') || '@entity';
    const seen = fields[key];
    fields[key] = seen === undefined ? issue.message : Array.isArray(seen) ? [...seen, issue.message] : [String(seen), issue.message];
  }
  return fields;
}

/** Validates one plugin row against its plugin's schema; the parsed config has every default filled. */
export function instantiate(row: Plugin, find: (name: string) => PluginDefinition | undefined): { def: PluginDefinition; instance: PluginInstance } {
  const def = find(row.name);
  if (!def) throw new SnapshotCompileError(`${describe(row)}: unknown plugin '${row.name}'`);
  if (def.noConsumer && row.consumer != null) {
    throw new SnapshotCompileError(`${describe(row)}: this plugin cannot be scoped to a consumer`);
  }
  const parsed = def.configSchema.safeParse(row.config ?? {});
  if (!parsed.success) {
    const problems = flattenFieldErrors(zodFieldErrors(parsed.error.issues as Array<{ path: PropertyKey[]; message: string }>));
    throw new SnapshotCompileError(`${describe(row)}: invalid config (${problems.join('; ')})`);
  }
  const config = parsed.data;
  const crossFieldErrors = def.checkConfig?.(config);
  if (crossFieldErrors) {
    throw new SnapshotCompileError(`${describe(row)}: invalid config (${flattenFieldErrors(crossFieldErrors as FieldErrors).join('; ')})`);
  }
  const protocols = row.protocols ?? ['http', 'https'];
  return {
    def,
    instance: { id: row.id, name: row.name, config, http: protocols.includes('http'), https: protocols.includes('https') },
  };
}

export function upstreamTarget(service: Service, upstreams: ReadonlyMap<string, UpstreamSpec>, tls: UpstreamTls | null): UpstreamTarget {
  const protocol = service.protocol === 'https' || service.protocol === 'grpcs' || service.protocol === 'tls' ? 'https' : 'http';
  const host = service.host;
  const port = service.port ?? (protocol === 'https' ? 443 : 80);
  const hostForUrl = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const defaultPort = protocol === 'https' ? 443 : 80;
  const origin = `${protocol}://${hostForUrl}:${port}`;
  const connectTimeout = service.connect_timeout ?? 60000;
  const tlsVerify = service.tls_verify === true;
  return {
    poolKey: `${origin}|${connectTimeout}|${tlsVerify ? 'verify' : 'noverify'}${tls ? `|${tls.key}` : ''}`,
    origin,
    protocol,
    host,
    port,
    hostHeader: port === defaultPort ? hostForUrl : `${hostForUrl}:${port}`,
    basePath: service.path ?? '/',
    connectTimeout,
    readTimeout: service.read_timeout ?? 60000,
    writeTimeout: service.write_timeout ?? 60000,
    tlsVerify,
    balancer: upstreams.has(host.toLowerCase()) ? host.toLowerCase() : null,
    tls: protocol === 'https' ? tls : null,
  };
}

/** Routes of the HTTP listeners: `http`/`https` and `grpc`/`grpcs` (gRPC rides HTTP/2). */
export function servesHttp(route: Route): boolean {
  return (route.protocols ?? ['http', 'https']).some((p) => p === 'http' || p === 'https' || p === 'grpc' || p === 'grpcs');
}

/**
 * Turns a snapshot into what the request path reads: the route table, per-route plugin chains with their scope
 * candidates, each used plugin's index, and the consumer directory. Pure and deterministic; throws
 * SnapshotCompileError for a snapshot that cannot be loaded (unknown plugin, config failing its schema, a route
 * pointing at a missing service, an invalid regex). The control plane runs the same function before publishing.
 */
export function compile(snapshot: Snapshot, options: CompileOptions = {}): CompiledConfig {
  const find = options.findPlugin ?? findPlugin;
  const { config } = snapshot;
  const state = ConfigState.fromSnapshot(snapshot);
  const consumers = new ConsumerLookup(state.section('consumers'));

  // every configuration is validated, enabled or not, so a broken one never sits waiting to be enabled
  const groups = new Map<string, PluginGroup>();
  const warnings: CompileWarning[] = [];
  const vaults = new VaultResolver(config.vaults ?? [], options.env ?? process.env);
  for (const stored of config.plugins) {
    const prepared = preparePlugin(stored, find, vaults, consumers, warnings);
    if (prepared) addCandidate(groups, prepared);
  }

  const indexes = new Map<string, unknown>();
  for (const [name, { def }] of groups) {
    if (!def.compile) continue;
    indexes.set(name, buildIndex(def, config));
  }

  const services = new Map(config.services.map((s) => [s.id, s]));
  const upstreams = compileUpstreams(config);
  const tls = compileTls(config, config.services, vaults);
  const ordered = orderedGroups(groups);
  const routes: CompiledRoute[] = [];
  for (const route of config.routes) {
    const compiled = compileRoute(route, services, ordered, indexes, upstreams, tls);
    if (compiled) routes.push(compiled);
  }
  return {
    loaded: true,
    version: snapshot.version,
    hash: snapshot.hash,
    createdAt: snapshot.created_at,
    router: buildRouter(routes),
    routes,
    consumers,
    indexes,
    warnings,
    upstreams,
    tls,
    incremental: { state, groups, vaults, findPlugin: find, env: options.env ?? process.env },
  };
}

/** A plugin row validated (vault references resolved); null when disabled. Throws SnapshotCompileError. */
export function preparePlugin(
  stored: Plugin,
  find: (name: string) => PluginDefinition | undefined,
  vaults: VaultResolver,
  consumers: ConsumerDirectory,
  warnings: CompileWarning[],
): { name: string; def: PluginDefinition; candidate: ScopedInstance } | null {
  // secrets given as vault references are resolved here, from this node's environment, never stored resolved
  const referenceable = REFERENCEABLE_PLUGIN_FIELDS[stored.name];
  const row =
    referenceable && stored.config
      ? {
          ...stored,
          config: resolveConfigReferences(stored.config as Record<string, unknown>, referenceable, vaults, (path, err) =>
            warnings.push({ plugin_id: stored.id, plugin: stored.name, message: `config.${path}: ${err.message}` }),
          ),
        }
      : stored;
  const { def, instance } = instantiate(row, find);
  if (row.enabled === false) return null;
  // rows built by hand may leave foreign keys undefined: null means "any"
  const scope = { route: row.route ?? null, service: row.service ?? null, consumer: row.consumer ?? null };
  const anonymous = instance.config?.anonymous;
  if (def.auth && typeof anonymous === 'string' && anonymous !== '' && !consumers.byId.has(anonymous) && !consumers.byUsername.has(anonymous)) {
    warnings.push({ plugin_id: row.id, plugin: row.name, message: `config.anonymous '${anonymous}' does not reference an existing consumer` });
  }
  return { name: row.name, def, candidate: { row: scope, instance, rank: scopeRank(scope) } };
}

export function addCandidate(groups: Map<string, PluginGroup>, prepared: { name: string; def: PluginDefinition; candidate: ScopedInstance }): void {
  let group = groups.get(prepared.name);
  if (!group) groups.set(prepared.name, (group = { def: prepared.def, candidates: new Map() }));
  group.candidates.set(prepared.candidate.instance.id, prepared.candidate);
}

export function buildIndex(def: PluginDefinition, config: Snapshot['config']): unknown {
  try {
    return def.compile!(config);
  } catch (err) {
    throw new SnapshotCompileError(`plugin '${def.name}': cannot build its index (${(err as Error).message})`);
  }
}

/** plugin groups by priority, highest first (name breaks ties) */
export function orderedGroups(groups: ReadonlyMap<string, PluginGroup>): PluginGroup[] {
  return [...groups.values()].sort((a, b) => b.def.priority - a.def.priority || (a.def.name < b.def.name ? -1 : 1));
}

/** the configuration of a plugin that is global (no route, service or consumer), if it has one */
function globalInstance(candidates: Iterable<ScopedInstance>): PluginInstance | null {
  for (const candidate of candidates) if (candidate.rank === 0) return candidate.instance;
  return null;
}

/** a route's step whose plugin has a `log` hook (a rewrite step's plugin logs through the route's own step, if any) */
const logStep = (step: ChainStep): boolean => step.plugin.log !== undefined && !step.rewrite;

/** One route as the request path reads it; null for a route the HTTP proxy does not serve. */
export function compileRoute(
  route: Route,
  services: ReadonlyMap<string, Service>,
  ordered: readonly PluginGroup[],
  indexes: ReadonlyMap<string, unknown>,
  upstreams: ReadonlyMap<string, UpstreamSpec>,
  tls: ReturnType<typeof compileTls>,
): CompiledRoute | null {
  if (!servesHttp(route)) return null;
  let service: Service | null = null;
  if (route.service) {
    service = services.get(route.service.id) ?? null;
    if (!service) throw new SnapshotCompileError(`route ${route.id} references missing service ${route.service.id}`);
    // Kong leaves the routes of a disabled service out of the router
    if (service.enabled === false) return null;
  }
  const chain: ChainStep[] = [];
  // Kong's rewrite phase runs the global configurations' rewrite handlers before the route's plugins, whatever the route
  for (const { def, candidates } of ordered) {
    if (def.rewrite === undefined) continue;
    const global = globalInstance(candidates.values());
    if (global !== null) chain.push({ plugin: def, index: indexes.get(def.name), base: global, byConsumer: null, rewrite: true });
  }
  for (const { def, candidates } of ordered) {
    const { base, byConsumer } = resolveScope([...candidates.values()], route.id, service?.id ?? null);
    if (base === null && byConsumer === null) continue;
    chain.push({ plugin: def, index: indexes.get(def.name), base, byConsumer, rewrite: false });
  }
  const protocols = route.protocols ?? ['http', 'https'];
  return {
    route,
    service,
    upstream: service ? upstreamTarget(service, upstreams, tls.upstream.get(service.id) ?? null) : null,
    chain: chain.length > 0 ? chain : NO_STEPS,
    logChain: chain.some(logStep) ? chain.filter(logStep) : NO_STEPS,
    stripPath: route.strip_path !== false,
    preserveHost: route.preserve_host === true,
    // Kong 3.9 joins `v1` paths as `v0` under the traditional_compatible router
    pathHandling: 'v0',
    acceptsHttp: protocols.includes('http') || protocols.includes('grpc'),
    acceptsHttps: protocols.includes('https') || protocols.includes('grpcs'),
    grpc: protocols.includes('grpc') || protocols.includes('grpcs'),
    grpcUpstream: service?.protocol === 'grpc' || service?.protocol === 'grpcs',
    httpsRedirectStatus: route.https_redirect_status_code ?? 426,
    requestBuffering: route.request_buffering !== false,
    responseBuffering: route.response_buffering !== false,
  };
}

export function buildRouter(routes: readonly CompiledRoute[]): Router {
  try {
    return new Router(routes);
  } catch (err) {
    throw new SnapshotCompileError((err as Error).message);
  }
}
