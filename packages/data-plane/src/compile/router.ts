import { compileLinearRegex, type LinearRegex } from '@gatehouse/core';
import type { CompiledRoute } from './types';

/**
 * Kong's route matching (3.x `traditional_compatible`). Each path of a route is its own entry; entries are sorted once
 * by Kong's precedence and the first one whose every attribute matches wins:
 *   1. more kinds of attributes set (methods, hosts, headers, paths) first;
 *   2. routes whose hosts are all plain (no wildcard) before the others;
 *   3. more header conditions first;
 *   4. regex paths before prefix paths;
 *   5. higher `regex_priority` first;
 *   6. longer prefix first;
 *   7. older route first (then id), so the order never depends on the snapshot's list order.
 * Plain paths are raw string prefixes (`/foo` matches `/foobar`); regex paths (`~/…`) are anchored at the start.
 * Paths are matched against the normalised request path (proxy/normalize-path.ts). Regexes, of paths and of header
 * values (`~*`), run on a linear-time engine (RE2 semantics, decision 17).
 */

interface HostMatcher {
  /** hosts without a port: match whatever port the client used */
  anyPort: Set<string>;
  /** `host:port` entries: match only that port */
  withPort: Set<string>;
  /** `*.example.com` → suffix `.example.com`; `example.*` → prefix `example.` */
  suffixes: string[];
  prefixes: string[];
}

interface HeaderCondition {
  name: string;
  values: Set<string>;
  patterns: LinearRegex[];
}

interface RouteEntry {
  route: CompiledRoute;
  methods: Set<string> | null;
  hosts: HostMatcher | null;
  headers: HeaderCondition[] | null;
  prefix: string | null;
  regex: LinearRegex | null;
  // precedence keys
  kinds: number;
  plainHostsOnly: boolean;
  headerCount: number;
  regexPriority: number;
  createdAt: number;
  id: string;
}

/** The route that matched and how much of the path it matched (what `strip_path` removes). */
export interface RouteMatch {
  route: CompiledRoute;
  /** the matched prefix, or the text a regex path matched; '' when the route has no paths */
  matched: string;
  /** the regex path that matched (its groups are Kong's `uri_captures`); absent for prefix paths */
  pattern?: LinearRegex;
}

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

function hostMatcher(hosts: string[]): { matcher: HostMatcher; plainOnly: boolean } {
  const matcher: HostMatcher = { anyPort: new Set(), withPort: new Set(), suffixes: [], prefixes: [] };
  let plainOnly = true;
  for (const raw of hosts) {
    const host = raw.toLowerCase();
    if (host.startsWith('*')) {
      matcher.suffixes.push(host.slice(1));
      plainOnly = false;
    } else if (host.endsWith('*')) {
      matcher.prefixes.push(host.slice(0, -1));
      plainOnly = false;
    } else if (/:\d+$/.test(host)) {
      matcher.withPort.add(host);
    } else {
      matcher.anyPort.add(host);
    }
  }
  return { matcher, plainOnly };
}

function headerConditions(headers: Record<string, string[]>): HeaderCondition[] {
  return Object.keys(headers)
    .sort()
    .map((name) => {
      const values = new Set<string>();
      const patterns: LinearRegex[] = [];
      for (const value of headers[name]!) {
        if (value.startsWith('~*')) patterns.push(compileRegex(value.slice(2), { caseInsensitive: true }, `header ${name}`));
        else values.add(value.toLowerCase());
      }
      return { name: name.toLowerCase(), values, patterns };
    });
}

function compileRegex(source: string, options: { anchored?: boolean; caseInsensitive?: boolean }, what: string): LinearRegex {
  try {
    return compileLinearRegex(source, options);
  } catch (err) {
    throw new Error(`invalid regex for ${what}: ${source} (${(err as Error).message})`);
  }
}

function entriesOf(route: CompiledRoute): RouteEntry[] {
  const r = route.route;
  const methods = r.methods && r.methods.length > 0 ? new Set(r.methods) : null;
  const hostInfo = r.hosts && r.hosts.length > 0 ? hostMatcher(r.hosts) : null;
  const headers = r.headers && Object.keys(r.headers).length > 0 ? headerConditions(r.headers) : null;
  const paths = r.paths && r.paths.length > 0 ? r.paths : null;
  const kinds = (methods ? 1 : 0) + (hostInfo ? 1 : 0) + (headers ? 1 : 0) + (paths ? 1 : 0);
  const base = {
    route,
    methods,
    hosts: hostInfo?.matcher ?? null,
    headers,
    kinds,
    plainHostsOnly: hostInfo?.plainOnly ?? false,
    headerCount: headers?.length ?? 0,
    regexPriority: r.regex_priority ?? 0,
    createdAt: r.created_at ?? 0,
    id: r.id,
  };
  if (!paths) return [{ ...base, prefix: null, regex: null }];
  return paths.map((path) =>
    path.startsWith('~')
      ? { ...base, prefix: null, regex: compileRegex(path.slice(1), { anchored: true }, `route ${r.id} path`) }
      : { ...base, prefix: path, regex: null },
  );
}

/** Negative when `a` must be tried before `b`. */
export function comparePrecedence(a: RouteEntry, b: RouteEntry): number {
  if (a.kinds !== b.kinds) return b.kinds - a.kinds;
  if (a.plainHostsOnly !== b.plainHostsOnly) return a.plainHostsOnly ? -1 : 1;
  if (a.headerCount !== b.headerCount) return b.headerCount - a.headerCount;
  const aRegex = a.regex !== null;
  const bRegex = b.regex !== null;
  if (aRegex !== bRegex) return aRegex ? -1 : 1;
  if (a.regexPriority !== b.regexPriority) return b.regexPriority - a.regexPriority;
  const aLength = a.prefix?.length ?? 0;
  const bLength = b.prefix?.length ?? 0;
  if (aLength !== bLength) return bLength - aLength;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function hostMatches(matcher: HostMatcher, hostWithPort: string, hostOnly: string): boolean {
  if (matcher.anyPort.has(hostOnly)) return true;
  if (matcher.withPort.size > 0 && matcher.withPort.has(hostWithPort)) return true;
  for (const suffix of matcher.suffixes) if (hostOnly.length > suffix.length && hostOnly.endsWith(suffix)) return true;
  for (const prefix of matcher.prefixes) if (hostOnly.length > prefix.length && hostOnly.startsWith(prefix)) return true;
  return false;
}

function headersMatch(conditions: HeaderCondition[], headers: RequestHeaders): boolean {
  for (const condition of conditions) {
    const raw = headers[condition.name];
    if (raw === undefined) return false;
    const values = Array.isArray(raw) ? raw : [raw];
    let ok = false;
    for (const value of values) {
      const lower = value.toLowerCase();
      if (condition.values.has(lower) || condition.patterns.some((p) => p.test(value))) {
        ok = true;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

function stripPort(host: string): string {
  // IPv6 literals keep their brackets: [::1]:8000 → [::1]
  const colon = host.lastIndexOf(':');
  if (colon < 0 || host.endsWith(']')) return host;
  return host.slice(0, colon);
}

export class Router {
  private readonly entries: RouteEntry[];
  private readonly usesHosts: boolean;

  constructor(routes: readonly CompiledRoute[]) {
    this.entries = routes.flatMap(entriesOf).sort(comparePrecedence);
    this.usesHosts = this.entries.some((e) => e.hosts !== null);
  }

  /** The routes in the order they are tried, for tests and diagnostics. */
  order(): Array<{ id: string; path: string | null }> {
    return this.entries.map((e) => ({ id: e.id, path: e.prefix ?? (e.regex ? `~${e.regex.source}` : null) }));
  }

  /** The route for a request; `host` is the Host header as received (it may carry a port). */
  match(method: string, host: string | undefined, path: string, headers: RequestHeaders): RouteMatch | null {
    let hostWithPort = '';
    let hostOnly = '';
    if (this.usesHosts && host !== undefined) {
      hostWithPort = host.toLowerCase();
      hostOnly = stripPort(hostWithPort);
    }
    for (const entry of this.entries) {
      if (entry.methods !== null && !entry.methods.has(method)) continue;
      if (entry.hosts !== null && (hostOnly === '' || !hostMatches(entry.hosts, hostWithPort, hostOnly))) continue;
      if (entry.headers !== null && !headersMatch(entry.headers, headers)) continue;
      if (entry.prefix !== null) {
        if (!path.startsWith(entry.prefix)) continue;
        return { route: entry.route, matched: entry.prefix };
      }
      if (entry.regex !== null) {
        const matched = entry.regex.exec(path);
        if (matched === null) continue;
        return { route: entry.route, matched, pattern: entry.regex };
      }
      return { route: entry.route, matched: '' };
    }
    return null;
  }
}
