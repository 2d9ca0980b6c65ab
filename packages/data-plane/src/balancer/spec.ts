import { healthchecksSchema, parseHostPort, type Healthchecks, type SnapshotConfig, type Upstream } from '@gatehouse/core';

export type HashSource = 'none' | 'consumer' | 'ip' | 'header' | 'cookie' | 'path' | 'query_arg' | 'uri_capture';
export type Algorithm = 'round-robin' | 'consistent-hashing' | 'least-connections' | 'latency';

/** Where a hash key comes from: the source and its argument (header name, cookie name, query arg, capture name). */
export interface HashRule {
  source: HashSource;
  /** lower-case header name, cookie name, query argument or capture group; null when the source takes none */
  name: string | null;
}

export interface TargetSpec {
  id: string;
  /** `host:port` as stored */
  target: string;
  host: string;
  port: number;
  weight: number;
  /** a name to resolve through DNS, or an IP address used as is */
  kind: 'name' | 'ipv4' | 'ipv6';
}

/** One upstream as the data plane balances it, read from the snapshot once. */
export interface UpstreamSpec {
  id: string;
  name: string;
  algorithm: Algorithm;
  hashOn: HashRule;
  hashFallback: HashRule;
  cookiePath: string;
  slots: number;
  healthchecks: Healthchecks;
  /** whether active checks run in the healthy / unhealthy state */
  activeHealthyInterval: number;
  activeUnhealthyInterval: number;
  /** any check at all: otherwise targets show HEALTHCHECKS_OFF */
  checksEnabled: boolean;
  /** passive checks count proxied exchanges */
  passiveEnabled: boolean;
  hostHeader: string | null;
  targets: readonly TargetSpec[];
  /** canonical text of everything but the targets: an unchanged upstream keeps its balancer state */
  fingerprint: string;
}

function rule(source: string, name: string | null | undefined): HashRule {
  const lower = source === 'header' && name ? name.toLowerCase() : (name ?? null);
  return { source: source as HashSource, name: lower };
}

/** Upstreams mostly share a few health-check settings: each distinct one is parsed once per snapshot. */
function healthchecksOf(raw: unknown, seen: Map<string, Healthchecks>): Healthchecks {
  const key = JSON.stringify(raw ?? {});
  let parsed = seen.get(key);
  // rows from older snapshots or hand-built ones get Kong's defaults
  if (parsed === undefined) seen.set(key, (parsed = healthchecksSchema.parse(raw ?? {})));
  return parsed;
}

function upstreamSpec(upstream: Upstream, targets: TargetSpec[], seen: Map<string, Healthchecks>): UpstreamSpec {
  const healthchecks = healthchecksOf(upstream.healthchecks, seen);
  const { active, passive } = healthchecks;
  const activeOn = active.healthy.interval > 0 || active.unhealthy.interval > 0;
  const passiveOn = passive.healthy.successes > 0 || passive.unhealthy.http_failures > 0 || passive.unhealthy.tcp_failures > 0 || passive.unhealthy.timeouts > 0;
  const hashOn = rule(upstream.hash_on ?? 'none', upstream.hash_on === 'header' ? upstream.hash_on_header : upstream.hash_on === 'cookie' ? upstream.hash_on_cookie : upstream.hash_on === 'query_arg' ? upstream.hash_on_query_arg : upstream.hash_on_uri_capture);
  const fb = upstream.hash_fallback ?? 'none';
  const hashFallback = rule(fb, fb === 'header' ? upstream.hash_fallback_header : fb === 'cookie' ? upstream.hash_on_cookie : fb === 'query_arg' ? upstream.hash_fallback_query_arg : upstream.hash_fallback_uri_capture);
  const spec: Omit<UpstreamSpec, 'fingerprint'> = {
    id: upstream.id,
    name: upstream.name.toLowerCase(),
    algorithm: (upstream.algorithm ?? 'round-robin') as Algorithm,
    hashOn,
    hashFallback,
    cookiePath: upstream.hash_on_cookie_path ?? '/',
    slots: upstream.slots ?? 10000,
    healthchecks,
    activeHealthyInterval: active.healthy.interval,
    activeUnhealthyInterval: active.unhealthy.interval,
    checksEnabled: activeOn || passiveOn,
    passiveEnabled: passiveOn,
    hostHeader: upstream.host_header ?? null,
    targets,
  };
  const { targets: _t, ...rest } = spec;
  return { ...spec, fingerprint: JSON.stringify(rest) };
}

/**
 * The upstreams of a snapshot keyed by name (lower-case), each with its targets. Targets whose text cannot be parsed
 * are left out (the control plane never stores them).
 */
export function compileUpstreams(config: Pick<SnapshotConfig, 'upstreams' | 'targets'> & Partial<Pick<SnapshotConfig, 'services'>>): ReadonlyMap<string, UpstreamSpec> {
  const byUpstream = new Map<string, TargetSpec[]>();
  for (const t of config.targets ?? []) {
    const parsed = parseHostPort(t.target);
    if (parsed === null || !t.upstream) continue;
    const list = byUpstream.get(t.upstream.id) ?? [];
    list.push({ id: t.id, target: t.target, host: parsed.host, port: parsed.port ?? 8000, weight: t.weight ?? 100, kind: parsed.kind });
    byUpstream.set(t.upstream.id, list);
  }
  const out = new Map<string, UpstreamSpec>();
  const seen = new Map<string, Healthchecks>();
  for (const upstream of config.upstreams ?? []) {
    const targets = (byUpstream.get(upstream.id) ?? []).sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
    const spec = upstreamSpec(upstream, targets, seen);
    out.set(spec.name, spec);
  }
  for (const service of config.services ?? []) serviceHostUpstream(service, out, seen);
  return out;
}

/**
 * A service whose host is an SRV name (`_service._proto.name`) and no upstream's is balanced as an upstream of its
 * own with that one target, so the name is resolved in `dns_order` (SRV records: their addresses, ports and weights)
 * as Kong's DNS client resolves service hosts.
 */
function serviceHostUpstream(service: { host?: string | null; port?: number | null }, out: Map<string, UpstreamSpec>, seen: Map<string, Healthchecks>): void {
  const host = service.host?.toLowerCase();
  if (!host || !host.startsWith('_') || out.has(host)) return;
  const port = service.port ?? 80;
  const upstream = { id: `service-host:${host}`, name: host } as Upstream;
  out.set(host, upstreamSpec(upstream, [{ id: `service-host:${host}:${port}`, target: `${host}:${port}`, host, port, weight: 100, kind: 'name' }], seen));
}
