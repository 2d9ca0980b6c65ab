import { comparePriority, entriesOf, EXACT, portColon, SUFFIX, type HeaderCondition, type HostRule, type NetRule, type RouteEntry } from './route-entries';
import { HostBuckets, PathBuckets } from './router-buckets';
import type { CompiledRoute } from './types';
import { inNetwork, socketAddressBytes, type LinearRegex } from '@gatehouse/core';
import { compareExpressionEntries, expressionEntryOf, ExpressionIndex, hasExpression, type ExpressionEntry } from './expression-index';
import { ExpressionRequest, type RequestFacts, type RequestHeaders } from './expression-match';

/**
 * Kong 3.9's `traditional_compatible` router. Matchers (route-entries.ts) are ranked once by Kong's priority; a
 * request goes to the best-ranked matcher whose every attribute matches:
 *   - methods: exactly;
 *   - hosts: `a.test`, `*.a.test` (ends with `.a.test`), `a.*` (starts with `a.`), case-insensitively; with `:port`
 *     only on that port, where a Host header without a port stands for the port the request came in on;
 *   - headers: each named header has a value (each line of a header sent several times is a value of its own) equal,
 *     case-insensitively, to one of the route's, or matching one of its `~*` patterns;
 *   - paths: plain paths are raw string prefixes (`/foo` matches `/foobar`), regex paths (`~/…`) are anchored at the
 *     start. They are matched against the normalised request path (proxy/normalize-path.ts).
 * Regexes, of paths and of header values, run on a linear-time engine (RE2 semantics, decision 17).
 *
 * The match costs the same whatever the number of routes: matchers are filed by host (exact name, wildcard suffix,
 * wildcard prefix, or none) and within that by prefix path, or by the literal text a regex path must start with, and a
 * request looks up only the buckets its host and path can reach. Regexes without such a text (`~/(a|b)`, `~.*`) and
 * routes with neither host nor path are tried in rank order.
 *
 * Routes with an `expression` (router_flavor = expressions) rank before the others and are matched through their own
 * index (expression-index.ts); traditional routes keep working beside them, as Kong translates them.
 */

/** The route that matched and how much of the path it matched (what `strip_path` removes). */
export interface RouteMatch {
  route: CompiledRoute;
  /** the matched prefix, or the text a regex path matched; '' when the route has no paths */
  matched: string;
  /** the regex path that matched (its groups are Kong's `uri_captures`); absent for prefix paths */
  pattern?: LinearRegex;
}

export type { RequestFacts, RequestHeaders } from './expression-match';

const NO_HEADERS: RequestHeaders = Object.freeze({});

export class Router {
  private readonly entries: RouteEntry[];
  private readonly expressionEntries: ExpressionEntry[];
  private readonly expressions: ExpressionIndex | null;
  private readonly expressionRequest = new ExpressionRequest();
  private readonly exact = new HostBuckets();
  private readonly suffixes = new HostBuckets();
  private readonly prefixes = new HostBuckets();
  private readonly hostless = new PathBuckets();
  private readonly usesHosts: boolean;
  /** whether some route matches on headers (then the caller passes each header's lines apart) */
  readonly usesHeaders: boolean;
  /** whether some route has an expression or HTTP `sources`/`destinations` (then the caller passes the request's facts) */
  readonly usesExpressions: boolean;

  // the request being matched (match() runs to its end synchronously, so one set of fields serves every request)
  private method = '';
  private host = '';
  private port: number | null = null;
  private path = '';
  private headers: RequestHeaders = NO_HEADERS;
  /** the TLS server name of the request ('' without one); undefined on a plain request, where `snis` are not read */
  private sni: string | undefined = undefined;
  private facts: RequestFacts | undefined = undefined;
  private best: RouteEntry | null = null;
  private bestRank = Infinity;
  private bestMatched = '';
  private bestPattern: LinearRegex | null = null;

  constructor(routes: readonly CompiledRoute[]) {
    const expressionRoutes = routes.filter(hasExpression);
    const ranked = expressionRoutes.map(expressionEntryOf).sort(compareExpressionEntries);
    ranked.forEach((entry, rank) => (entry.rank = rank));
    this.expressionEntries = ranked;
    this.expressions = ranked.length > 0 ? new ExpressionIndex(ranked) : null;
    const traditional = expressionRoutes.length > 0 ? routes.filter((r) => !hasExpression(r)) : routes;
    this.entries = traditional.flatMap(entriesOf).sort(comparePriority);
    this.entries.forEach((entry, rank) => (entry.rank = ranked.length + rank));
    for (const entry of this.entries) {
      if (entry.hosts === null) this.hostless.add(entry);
      else for (const rule of entry.hosts) this.bucketsOf(rule).add(rule.value, entry);
    }
    this.exact.seal();
    this.suffixes.seal();
    this.prefixes.seal();
    this.hostless.seal();
    this.usesHosts = this.entries.some((e) => e.hosts !== null);
    this.usesExpressions = ranked.length > 0 || this.entries.some((e) => e.nets !== null);
    this.usesHeaders = this.usesExpressions || this.entries.some((e) => e.headers !== null);
  }

  private bucketsOf(rule: HostRule): HostBuckets {
    return rule.kind === EXACT ? this.exact : rule.kind === SUFFIX ? this.suffixes : this.prefixes;
  }

  /** The matchers in the order they are tried, one line per path, for tests and diagnostics. */
  order(): Array<{ id: string; path: string | null }> {
    const expressions: Array<{ id: string; path: string | null }> = this.expressionEntries.map((e) => ({ id: e.id, path: null }));
    return expressions.concat(this.entries.flatMap((e) => {
      const paths = e.prefixes ?? e.regexes?.map((r) => `~${r.source}`) ?? [null];
      return paths.map((path) => ({ id: e.route.route.id, path }));
    }));
  }

  /**
   * The route for a request. `host` is the Host header as received (it may carry a port); `localPort` is the port the
   * request came in on, which a Host header without a port stands for. `headers` values that are arrays are the
   * lines of a header sent several times. `sni` is the server name of a TLS request ('' when it sent none), and
   * undefined for a plain one. `facts` (query, addresses, scheme) are read by expression routes only.
   */
  match(method: string, host: string | undefined, path: string, headers: RequestHeaders, localPort?: number, sni?: string, facts?: RequestFacts): RouteMatch | null {
    this.method = method;
    this.sni = sni === undefined ? undefined : sni.toLowerCase();
    this.path = path;
    this.headers = headers;
    this.facts = facts;
    this.best = null;
    this.bestRank = Infinity;
    this.bestMatched = '';
    this.bestPattern = null;
    this.host = '';
    this.port = null;
    const found = this.expressions === null ? null : this.searchExpressions(method, host, path, headers, sni, facts);
    if (found !== null) this.bestRank = found.entry.rank;
    if (this.usesHosts && host !== undefined && host !== '') {
      const lower = host.toLowerCase();
      const colon = portColon(lower);
      this.host = colon < 0 ? lower : lower.slice(0, colon);
      this.port = colon < 0 ? (localPort ?? null) : Number(lower.slice(colon + 1));
      this.searchHost();
    }
    this.searchPaths(this.hostless);
    const best = this.best as RouteEntry | null;
    this.headers = NO_HEADERS;
    if (best === null) {
      if (found === null) return null;
      return found.pattern === null ? { route: found.entry.route, matched: found.matched } : { route: found.entry.route, matched: found.matched, pattern: found.pattern };
    }
    const pattern = this.bestPattern;
    this.bestPattern = null;
    return pattern === null ? { route: best.route, matched: this.bestMatched } : { route: best.route, matched: this.bestMatched, pattern };
  }

  private searchExpressions(method: string, host: string | undefined, path: string, headers: RequestHeaders, sni: string | undefined, facts: RequestFacts | undefined) {
    let name = host === undefined ? '' : host.toLowerCase();
    const colon = portColon(name);
    if (colon >= 0) name = name.slice(0, colon);
    this.expressionRequest.reset(method, name, path, headers, sni, facts);
    return this.expressions!.search(this.expressionRequest, Infinity);
  }

  private searchHost(): void {
    const host = this.host;
    const exact = this.exact.byKey.get(host);
    if (exact !== undefined) this.searchPaths(exact);
    for (const length of this.suffixes.lengths) {
      if (length > host.length) break;
      const buckets = this.suffixes.byKey.get(host.slice(host.length - length));
      if (buckets !== undefined) this.searchPaths(buckets);
    }
    for (const length of this.prefixes.lengths) {
      if (length > host.length) break;
      const buckets = this.prefixes.byKey.get(host.slice(0, length));
      if (buckets !== undefined) this.searchPaths(buckets);
    }
  }

  /** Records the best-ranked matching entry of `buckets` if it ranks before the best found so far. */
  private searchPaths(buckets: PathBuckets): void {
    const path = this.path;
    for (const length of buckets.lengths) {
      if (length > path.length) break;
      const prefix = length === path.length ? path : path.slice(0, length);
      const list = buckets.byPrefix.get(prefix);
      if (list !== undefined) this.firstMatch(list, prefix);
    }
    for (const length of buckets.regexLengths) {
      if (length > path.length) break;
      const list = buckets.byRegexPrefix.get(length === path.length ? path : path.slice(0, length));
      if (list !== undefined) this.firstMatch(list, null);
    }
    this.firstMatch(buckets.rest, null);
  }

  private firstMatch(list: RouteEntry[], prefix: string | null): void {
    for (const entry of list) {
      if (entry.rank >= this.bestRank) return;
      if (!this.accepts(entry)) continue;
      if (prefix !== null) {
        this.best = entry;
        this.bestRank = entry.rank;
        this.bestMatched = prefix;
        this.bestPattern = null;
        return;
      }
      if (entry.regexes === null) {
        this.best = entry;
        this.bestRank = entry.rank;
        this.bestMatched = '';
        this.bestPattern = null;
        return;
      }
      for (const regex of entry.regexes) {
        const matched = regex.exec(this.path);
        if (matched !== null) {
          this.best = entry;
          this.bestRank = entry.rank;
          this.bestMatched = matched;
          this.bestPattern = regex;
          return;
        }
      }
    }
  }

  /** Methods, hosts and headers (the path is what filed the entry, or its regexes, checked by the caller). */
  private accepts(entry: RouteEntry): boolean {
    if (entry.methods !== null && !entry.methods.has(this.method)) return false;
    if (entry.hosts !== null && !this.hostMatches(entry.hosts)) return false;
    if (entry.snis !== null && this.sni !== undefined && !nameMatches(entry.snis, this.sni)) return false;
    if (entry.nets !== null && !this.netsMatch(entry.nets.sources, entry.nets.destinations)) return false;
    return entry.headers === null || headersMatch(entry.headers, this.headers);
  }

  /** HTTP `sources`/`destinations` (router_flavor = expressions): the peer's and the local address and port */
  private netsMatch(sources: NetRule[] | null, destinations: NetRule[] | null): boolean {
    const facts = this.facts;
    if (facts === undefined) return false;
    const matches = (rules: NetRule[] | null, address: string | undefined, port: number | undefined) => {
      if (rules === null) return true;
      const bytes = socketAddressBytes(address);
      return rules.some((r) => (r.ip === null || (bytes !== null && inNetwork(bytes, r.ip))) && (r.port === null || r.port === port));
    };
    return matches(sources, facts.remoteAddress, facts.remotePort) && matches(destinations, facts.localAddress, facts.localPort);
  }

  private hostMatches(rules: HostRule[]): boolean {
    const host = this.host;
    for (const rule of rules) {
      if (rule.port !== null && rule.port !== this.port) continue;
      if (rule.kind === EXACT ? host === rule.value : rule.kind === SUFFIX ? host.endsWith(rule.value) : host.startsWith(rule.value)) return true;
    }
    return false;
  }
}

function nameMatches(rules: HostRule[], name: string): boolean {
  for (const rule of rules) {
    if (rule.kind === EXACT ? name === rule.value : rule.kind === SUFFIX ? name.endsWith(rule.value) : name.startsWith(rule.value)) return true;
  }
  return false;
}

function headersMatch(conditions: HeaderCondition[], headers: RequestHeaders): boolean {
  for (const condition of conditions) {
    const raw = headers[condition.name];
    if (raw === undefined) return false;
    if (typeof raw === 'string' ? !valueMatches(condition, raw) : !raw.some((value) => valueMatches(condition, value))) return false;
  }
  return true;
}

function valueMatches(condition: HeaderCondition, value: string): boolean {
  if (condition.values.has(value.toLowerCase())) return true;
  for (const pattern of condition.patterns) if (pattern.test(value)) return true;
  return false;
}
