import { amendAtcExpression, parseAtc, type Route, type Service } from '@gatehouse/core';
import { AddressSet } from '@gatehouse/plugins';
import { upstreamTarget } from '../compile/compile';
import type { CompiledConfig, UpstreamTarget } from '../compile/types';
import { compileExpression, ExpressionRequest, type CompiledExpression, type MatchState } from '../compile/expression-match';
import { streamLogSteps, type StreamLogSteps } from './stream-log';

/**
 * The stream routes (`tcp`, `tls`, `udp`, `tls_passthrough`) of a configuration, as Kong 3.9's router ranks them
 * (kong/router/transform.lua, stream priority): a route with `snis`, or with both `sources` and `destinations`, first;
 * then by the weight of its sources, then of its destinations (an exact IP above a port above a CIDR); equal ranks by
 * id, highest first. `snis` are read on TLS connections only (`net.protocol != "tls" || tls.sni == …`).
 * Routes with an `expression` (router_flavor = expressions) come first, by `priority` then id, and read `net.*` and
 * `tls.sni`; `net.protocol` is `udp`, else `tls` when the connection sent a server name, else `tcp`, as in Kong.
 */

/** What a connection is matched on. */
export interface StreamConnection {
  /** `tcp`, `tls` (terminated here), `udp`, or `tls_passthrough` (a ClientHello on a plain TCP listener) */
  protocol: string;
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  /** the TLS server name; '' without one */
  sni: string;
}

interface NetRule {
  ips: AddressSet | null;
  port: number | null;
}

export interface StreamRoute {
  route: Route;
  service: Service | null;
  upstream: UpstreamTarget | null;
  /** the ip-restriction configuration that applies to the route's connections (preread), if any */
  ipRestriction: { allow: AddressSet | null; deny: AddressSet | null } | null;
  protocols: Set<string>;
  /** the logging plugins run when a session ends, by the session's protocol */
  logSteps: StreamLogSteps;
  sources: NetRule[] | null;
  destinations: NetRule[] | null;
  snis: string[] | null;
  priority: number;
  /** the route's expression; null for a route with traditional fields */
  expression: CompiledExpression | null;
}

const STREAM_PROTOCOLS = new Set(['tcp', 'tls', 'udp', 'tls_passthrough']);

function ipWeight(nets: Route['sources']): number {
  let weight = 0;
  for (const net of nets ?? []) {
    if (net.ip != null) weight |= net.ip.includes('/') ? 1 : 8;
    if (net.port != null) weight |= 4;
  }
  return weight;
}

function netRules(nets: Route['sources']): NetRule[] | null {
  if (!nets || nets.length === 0) return null;
  return nets.map((net) => ({ ips: net.ip != null ? new AddressSet([net.ip]) : null, port: net.port ?? null }));
}

function netMatches(rules: NetRule[] | null, ip: string, port: number): boolean {
  if (rules === null) return true;
  return rules.some((rule) => (rule.ips === null || rule.ips.has(ip)) && (rule.port === null || rule.port === port));
}

function sniMatches(snis: string[], sni: string): boolean {
  return snis.some((name) => {
    if (name.startsWith('*')) return sni.endsWith(name.slice(1));
    if (name.endsWith('*')) return sni.startsWith(name.slice(0, -1));
    return sni === (name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name);
  });
}

/** The ip-restriction for a stream route: the route's, else its service's, else a global one (Kong's precedence). */
function ipRestrictionOf(config: CompiledConfig, route: Route, protocols: Set<string>): StreamRoute['ipRestriction'] {
  const group = config.incremental?.groups.get('ip-restriction');
  if (group === undefined) return null;
  let best: { rank: number; config: Record<string, unknown> } | null = null;
  for (const row of config.incremental?.state.list('plugins') ?? []) {
    const candidate = group.candidates.get(row.id);
    if (candidate === undefined || candidate.row.consumer !== null) continue;
    const applies = Array.isArray(row.protocols) && row.protocols.some((p) => typeof p === 'string' && protocols.has(p));
    if (!applies) continue;
    const scope = candidate.row;
    const rank = scope.route !== null ? (scope.route.id === route.id ? 3 : -1) : scope.service !== null ? (scope.service.id === route.service?.id ? 2 : -1) : 1;
    if (rank > 0 && (best === null || rank > best.rank)) best = { rank, config: candidate.instance.config };
  }
  if (best === null) return null;
  const list = (v: unknown) => (Array.isArray(v) && v.length > 0 ? new AddressSet(v.map(String)) : null);
  return { allow: list(best.config.allow), deny: list(best.config.deny) };
}

/** The stream routes of `config`, in the order they are tried. */
export function compileStreamRoutes(config: CompiledConfig): StreamRoute[] {
  const state = config.incremental?.state;
  if (state === undefined) return [];
  const services = new Map<string, Service>();
  for (const row of state.list('services')) services.set(row.id, row as Service);
  const routes: StreamRoute[] = [];
  for (const row of state.list('routes')) {
    const route = row as Route;
    const protocols = new Set((route.protocols ?? []).filter((p) => STREAM_PROTOCOLS.has(p)));
    if (protocols.size === 0) continue;
    const service = route.service ? (services.get(route.service.id) ?? null) : null;
    if (service !== null && service.enabled === false) continue;
    const expression = expressionOf(route);
    if (expression === undefined) continue;
    const snis = route.snis && route.snis.length > 0 ? route.snis.map((s) => s.toLowerCase()) : null;
    const both = (route.sources?.length ?? 0) > 0 && (route.destinations?.length ?? 0) > 0;
    routes.push({
      route,
      service,
      upstream: service ? upstreamTarget(service, config.upstreams, config.tls.upstream.get(service.id) ?? null) : null,
      ipRestriction: ipRestrictionOf(config, route, protocols),
      protocols,
      logSteps: streamLogSteps(config, route, protocols),
      sources: netRules(route.sources),
      destinations: netRules(route.destinations),
      snis,
      priority: expression !== null ? route.priority ?? 0 : (snis !== null || both ? 2 ** 12 : 0) + ipWeight(route.sources) * 16 + ipWeight(route.destinations),
      expression,
    });
  }
  const expressionFirst = (a: StreamRoute, b: StreamRoute) => Number(b.expression !== null) - Number(a.expression !== null);
  return routes.sort((a, b) => expressionFirst(a, b) || b.priority - a.priority || (a.route.id < b.route.id ? 1 : -1));
}

/** A route's compiled expression, null without one, undefined when it does not compile (the route is left out). */
function expressionOf(route: Route): CompiledExpression | null | undefined {
  if (typeof route.expression !== 'string') return null;
  try {
    return compileExpression(parseAtc(amendAtcExpression(route.expression)));
  } catch {
    return undefined;
  }
}

const streamRequest = new ExpressionRequest();
const matchState: MatchState = { matched: null, pattern: null };

function expressionMatches(expression: CompiledExpression, conn: StreamConnection): boolean {
  const scheme = conn.protocol === 'udp' ? 'udp' : conn.sni !== '' ? 'tls' : 'tcp';
  const facts = { scheme, query: '', remoteAddress: conn.srcIp, remotePort: conn.srcPort, localAddress: conn.dstIp, localPort: conn.dstPort };
  streamRequest.reset('', '', '', {}, conn.sni === '' ? undefined : conn.sni, facts);
  return expression(streamRequest, matchState);
}

/** The first route, in rank order, that matches the connection. */
export function matchStream(routes: readonly StreamRoute[], conn: StreamConnection): StreamRoute | null {
  for (const entry of routes) {
    if (!entry.protocols.has(conn.protocol)) continue;
    if (entry.expression !== null) {
      if (expressionMatches(entry.expression, conn)) return entry;
      continue;
    }
    if (!netMatches(entry.sources, conn.srcIp, conn.srcPort)) continue;
    if (!netMatches(entry.destinations, conn.dstIp, conn.dstPort)) continue;
    const readsSni = conn.protocol === 'tls' || conn.protocol === 'tls_passthrough';
    if (entry.snis !== null && readsSni && !sniMatches(entry.snis, conn.sni)) continue;
    return entry;
  }
  return null;
}

/** Whether the ip-restriction of the route refuses the client (deny wins; with an allow list, others are refused). */
export function ipRefused(entry: StreamRoute, ip: string): boolean {
  const rules = entry.ipRestriction;
  if (rules === null) return false;
  if (rules.deny !== null && rules.deny.has(ip)) return true;
  return rules.allow !== null && !rules.allow.has(ip);
}
