import { createHash } from 'node:crypto';
import { compileLinearRegex, parseAddress, parseCidr, type IpValue, type LinearRegex, type Route } from '@gatehouse/core';
import type { CompiledRoute } from './types';

/**
 * A route as Kong 3.9's `traditional_compatible` router sees it (kong/router/transform.lua): one matcher per route,
 * except that a route whose paths mix regexes and prefixes of different lengths is split into one matcher per group
 * (all its regexes; its prefixes of one length), each with its own priority and its own id. Matchers are tried by
 * priority, highest first, and equal priorities by id, highest first (the ATC router keeps them in a map ordered by
 * (priority, uuid) and walks it backwards). The priority compares, in order:
 *   1. how many kinds of attributes the route sets (methods, hosts, headers, paths, snis);
 *   2. whether it has hosts and none is a wildcard;
 *   3. how many header names it sets;
 *   4. whether its paths are regexes;
 *   5. for regex paths only, `regex_priority`;
 *   6. for prefix paths, their length.
 */
export interface RouteEntry {
  route: CompiledRoute;
  /** the matcher's id: the route's, or for one group of a split route the UUID v5 Kong derives for it */
  id: string;
  methods: Set<string> | null;
  hosts: HostRule[] | null;
  headers: HeaderCondition[] | null;
  /** `snis`, read only on TLS requests (Kong: `net.protocol != "https" || tls.sni == …`) */
  snis: HostRule[] | null;
  /** `sources`/`destinations` of an HTTP route (only router_flavor = expressions accepts them there) */
  nets: { sources: NetRule[] | null; destinations: NetRule[] | null } | null;
  /** prefix paths, all of one length */
  prefixes: string[] | null;
  /** regex paths, in the route's order (the first that matches gives the matched text) */
  regexes: LinearRegex[] | null;
  /** the literal text each of `regexes` must start with, when every one has some; else null */
  regexPrefixes: string[] | null;
  weight: number;
  plainHostsOnly: boolean;
  headerCount: number;
  regexPriority: number;
  prefixLength: number;
  /** position in the order matchers are tried (0 first); set by the router */
  rank: number;
}

/** One `sources`/`destinations` element: an address or a network, and a port; null parts match anything. */
export interface NetRule {
  ip: IpValue | null;
  port: number | null;
}

function netRules(list: Route['sources']): NetRule[] | null {
  if (!list || list.length === 0) return null;
  return list.map((net) => {
    let ip: IpValue | null = null;
    if (net.ip != null) {
      const parsed = net.ip.includes('/') ? parseCidr(net.ip) : parseAddress(net.ip);
      if (typeof parsed === 'string') throw new Error(`invalid address ${net.ip}: ${parsed}`);
      ip = parsed;
    }
    return { ip, port: net.port ?? null };
  });
}

export const EXACT = 0;
export const SUFFIX = 1;
export const PREFIX = 2;

export interface HostRule {
  /** EXACT `a.test`, SUFFIX `*.a.test` (value `.a.test`), PREFIX `a.*` (value `a.`) */
  kind: number;
  value: string;
  /** `host:port` matches that port only; null: any port */
  port: number | null;
}

export interface HeaderCondition {
  /** the request header it reads: lower case, `_` read as `-` (as nginx's header lookup does) */
  name: string;
  values: Set<string>;
  patterns: LinearRegex[];
}

/**
 * Kong's `split_host_port`: where the `:` before a port is in `host:port` (what follows it must be a number), or -1.
 * `[v6]:port` keeps its brackets in the host.
 */
export function portColon(raw: string): number {
  const from = raw.charCodeAt(0) === 91 /* [ */ ? raw.indexOf(']') + 1 : 0;
  const colon = raw.indexOf(':', from);
  if (colon < 0 || (from > 0 && colon !== from) || colon === raw.length - 1) return -1;
  for (let i = colon + 1; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  return colon;
}

function splitHostPort(raw: string): { host: string; port: number | null } {
  const colon = portColon(raw);
  return colon < 0 ? { host: raw, port: null } : { host: raw.slice(0, colon), port: Number(raw.slice(colon + 1)) };
}

function hostRule(raw: string): HostRule {
  const { host, port } = splitHostPort(raw.toLowerCase());
  if (host.charCodeAt(0) === 42 /* * */) return { kind: SUFFIX, value: host.slice(1), port };
  if (host.charCodeAt(host.length - 1) === 42) return { kind: PREFIX, value: host.slice(0, -1), port };
  return { kind: EXACT, value: host, port };
}

/** Kong's SNI rule: `*.a.test` by suffix, `a.*` by prefix, else the name without a trailing dot. */
function sniRule(raw: string): HostRule {
  const sni = raw.toLowerCase();
  if (sni.endsWith('*')) return { kind: PREFIX, value: sni.slice(0, -1), port: null };
  const name = sni.length > 1 && sni.endsWith('.') ? sni.slice(0, -1) : sni;
  if (name.startsWith('*')) return { kind: SUFFIX, value: name.slice(1), port: null };
  return { kind: EXACT, value: name, port: null };
}

function headerConditions(headers: Record<string, string[]>): HeaderCondition[] {
  return Object.keys(headers).map((name) => {
    const values = new Set<string>();
    const patterns: LinearRegex[] = [];
    for (const value of headers[name]!) {
      if (value.startsWith('~*')) patterns.push(compileRegex(value.slice(2), { caseInsensitive: true }, `header ${name}`));
      else values.add(value.toLowerCase());
    }
    return { name: name.toLowerCase().replace(/_/g, '-'), values, patterns };
  });
}

function compileRegex(source: string, options: { anchored?: boolean; caseInsensitive?: boolean }, what: string): LinearRegex {
  try {
    return compileLinearRegex(source, options);
  } catch (err) {
    throw new Error(`invalid regex for ${what}: ${source} (${(err as Error).message})`);
  }
}

const nonEmpty = <T>(list: T[] | null | undefined): list is T[] => Array.isArray(list) && list.length > 0;

/** Kong's path groups: all regexes in one, prefixes by length, in the order each group first appears. */
function pathGroups(paths: string[]): string[][] {
  const groups = new Map<number, string[]>();
  for (const path of paths) {
    const key = path.startsWith('~') ? -1 : path.length;
    const group = groups.get(key);
    if (group) group.push(path);
    else groups.set(key, [path]);
  }
  return [...groups.values()];
}

/** The matchers of one route: one, or one per path group when its paths fall in several. */
export function entriesOf(route: CompiledRoute): RouteEntry[] {
  const r = route.route;
  const methods = nonEmpty(r.methods) ? new Set(r.methods) : null;
  const hosts = nonEmpty(r.hosts) ? r.hosts.map(hostRule) : null;
  const headers = r.headers && Object.keys(r.headers).length > 0 ? headerConditions(r.headers) : null;
  const paths = nonEmpty(r.paths) ? r.paths : null;
  const snis = nonEmpty(r.snis) ? r.snis.map(sniRule) : null;
  const sources = netRules(r.sources);
  const destinations = netRules(r.destinations);
  const base = {
    route,
    methods,
    hosts,
    headers,
    snis,
    nets: sources !== null || destinations !== null ? { sources, destinations } : null,
    weight: (methods ? 1 : 0) + (hosts ? 1 : 0) + (headers ? 1 : 0) + (paths ? 1 : 0) + (snis ? 1 : 0) + (sources ? 1 : 0) + (destinations ? 1 : 0),
    plainHostsOnly: hosts !== null && hosts.every((h) => h.kind === EXACT),
    headerCount: headers?.length ?? 0,
    rank: 0,
  };
  if (paths === null) return [{ ...base, id: r.id, prefixes: null, regexes: null, regexPrefixes: null, regexPriority: 0, prefixLength: 0 }];
  const groups = pathGroups(paths);
  return groups.map((group, i) => {
    const id = groups.length === 1 ? r.id : splitRouteId(r.id, i + 1);
    if (group[0]!.startsWith('~')) {
      const regexes = group.map((p) => compileRegex(p.slice(1), { anchored: true }, `route ${r.id} path`));
      const literal = group.map((p) => literalPrefix(p.slice(1)));
      const regexPrefixes = literal.every((text) => text.length > 0) ? literal : null;
      return { ...base, id, prefixes: null, regexes, regexPrefixes, regexPriority: r.regex_priority ?? 0, prefixLength: 0 };
    }
    return { ...base, id, prefixes: group, regexes: null, regexPrefixes: null, regexPriority: 0, prefixLength: group[0]!.length };
  });
}

const REGEX_SYNTAX = new Set('\\.*+?()[]{}^$|');

/**
 * The literal text every match of an anchored regex path starts with: its characters up to the first piece of regex
 * syntax, less the last one when a `*`, `?` or `{` makes it optional. '' when the regex has an alternation anywhere.
 */
export function literalPrefix(source: string): string {
  if (source.includes('|')) return '';
  let i = 0;
  while (i < source.length && !REGEX_SYNTAX.has(source[i]!)) i++;
  const next = source[i];
  return next === '*' || next === '?' || next === '{' ? source.slice(0, Math.max(0, i - 1)) : source.slice(0, i);
}

/** Negative when `a` is tried before `b`. */
export function comparePriority(a: RouteEntry, b: RouteEntry): number {
  if (a.weight !== b.weight) return b.weight - a.weight;
  if (a.plainHostsOnly !== b.plainHostsOnly) return a.plainHostsOnly ? -1 : 1;
  if (a.headerCount !== b.headerCount) return b.headerCount - a.headerCount;
  const aRegex = a.regexes !== null;
  if (aRegex !== (b.regexes !== null)) return aRegex ? -1 : 1;
  if (a.regexPriority !== b.regexPriority) return b.regexPriority - a.regexPriority;
  if (a.prefixLength !== b.prefixLength) return b.prefixLength - a.prefixLength;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The namespace Kong derives split routes' ids in (kong/router/transform.lua). */
const SPLIT_NAMESPACE = '7f145bf9-0dce-4f91-98eb-debbce4b9f6b';

/** The id Kong gives group `group` (1-based) of a split route: the UUID v5 of `<route id>#<group>`. */
export function splitRouteId(routeId: string, group: number): string {
  return uuidV5(SPLIT_NAMESPACE, `${routeId}#${group}`);
}

/** A name-based UUID (RFC 4122 version 5, SHA-1). */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
