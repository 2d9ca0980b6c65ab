import { amendAtcExpression, conjunctsOf, parseAtc, type AtcExpression, type LinearRegex } from '@gatehouse/core';
import { compileExpression, type CompiledExpression, type ExpressionRequest, type MatchState } from './expression-match';
import { literalPrefix } from './route-entries';
import type { CompiledRoute } from './types';

/**
 * The routes that carry an `expression` (router_flavor = expressions), ranked as Kong's ATC router ranks them: by
 * `priority`, highest first, then by id, highest first (the crate keeps matchers in a map ordered by (priority, uuid)
 * and walks it backwards). Expression routes rank before every traditional route (Kong sets the top byte of their
 * priority, kong/router/transform.lua `EXPRESSION_ONLY_BIT`).
 *
 * The match does not grow with the number of routes for exact hosts, exact paths and path prefixes: each route is
 * filed by what the clauses of its top-level `&&` require (`http.host == "…"`, `=^ "…"` or `^= "…"`; `http.path == "…"`,
 * `^= "…"` or `~ "^literal…"`; or an `||` of such), and a request looks up only the buckets its host and path reach.
 * Routes without such a clause (unanchored regexes, negations, other fields) are tried in rank order.
 */
export interface ExpressionEntry {
  route: CompiledRoute;
  id: string;
  priority: number;
  test: CompiledExpression;
  /** position among every matcher (0 first); set by the router */
  rank: number;
}

export interface ExpressionMatch {
  entry: ExpressionEntry;
  matched: string;
  pattern: LinearRegex | null;
}

class PathIndex {
  readonly exact = new Map<string, ExpressionEntry[]>();
  readonly prefix = new Map<string, ExpressionEntry[]>();
  prefixLengths: number[] = [];
  readonly rest: ExpressionEntry[] = [];

  seal(): void {
    for (const list of this.exact.values()) list.sort(byRank);
    for (const list of this.prefix.values()) list.sort(byRank);
    this.rest.sort(byRank);
    this.prefixLengths = [...new Set([...this.prefix.keys()].map((k) => k.length))].sort((a, b) => a - b);
  }
}

const byRank = (a: ExpressionEntry, b: ExpressionEntry) => a.rank - b.rank;

function file(map: Map<string, ExpressionEntry[]>, key: string, entry: ExpressionEntry): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [entry]);
  else if (!list.includes(entry)) list.push(entry);
}

/** Path indexes by a host key of one kind (exact names, suffixes or prefixes), with the distinct key lengths. */
class HostMap {
  readonly byKey = new Map<string, PathIndex>();
  lengths: number[] = [];

  indexOf(key: string): PathIndex {
    let index = this.byKey.get(key);
    if (index === undefined) this.byKey.set(key, (index = new PathIndex()));
    return index;
  }

  seal(): void {
    for (const index of this.byKey.values()) index.seal();
    this.lengths = [...new Set([...this.byKey.keys()].map((k) => k.length))].sort((a, b) => a - b);
  }
}

interface Keys {
  /** by operator: `==` exact names, `=^` suffixes, `^=` prefixes */
  hosts: Map<string, string[]> | null;
  exactPaths: string[] | null;
  prefixes: string[] | null;
}

/** The string literals an `||`-tree of `field op "…"` predicates requires, by operator; null when it is anything else. */
function alternatives(e: AtcExpression, field: string, ops: readonly string[]): Map<string, string[]> | null {
  if (e.kind === 'or') {
    const left = alternatives(e.left, field, ops);
    const right = alternatives(e.right, field, ops);
    if (left === null || right === null) return null;
    for (const [op, values] of right) left.set(op, [...(left.get(op) ?? []), ...values]);
    return left;
  }
  if (e.kind !== 'predicate' || e.field !== field || e.lower || !ops.includes(e.op)) return null;
  if (e.value.type === 'Regex') {
    // `^literal…`: whatever it matches starts with the literal text, as a prefix would
    const literal = e.value.value.startsWith('^') ? literalPrefix(e.value.value.slice(1)) : '';
    return literal === '' ? null : new Map([['^=', [literal]]]);
  }
  if (e.value.type !== 'String') return null;
  return new Map([[e.op, [e.value.value]]]);
}

/** The index keys of an expression: the first top-level clause on the host, and the first on the path. */
function keysOf(e: AtcExpression): Keys {
  const keys: Keys = { hosts: null, exactPaths: null, prefixes: null };
  for (const clause of conjunctsOf(e)) {
    if (keys.hosts === null) {
      const hosts = alternatives(clause, 'http.host', ['==', '=^', '^=']);
      if (hosts !== null) {
        keys.hosts = hosts;
        continue;
      }
    }
    if (keys.exactPaths === null && keys.prefixes === null) {
      const paths = alternatives(clause, 'http.path', ['==', '^=', '~']);
      if (paths !== null) {
        keys.exactPaths = paths.get('==') ?? [];
        keys.prefixes = paths.get('^=') ?? [];
      }
    }
  }
  return keys;
}

export function hasExpression(route: CompiledRoute): boolean {
  return typeof route.route.expression === 'string';
}

/** Negative when `a` is tried before `b`: higher priority first, then higher id. */
export function compareExpressionEntries(a: ExpressionEntry, b: ExpressionEntry): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export function expressionEntryOf(route: CompiledRoute): ExpressionEntry & { expression: AtcExpression } {
  let expression: AtcExpression;
  try {
    expression = parseAtc(amendAtcExpression(route.route.expression!));
  } catch (err) {
    throw new Error(`invalid expression of route ${route.route.id}: ${(err as Error).message}`);
  }
  return { route, id: route.route.id, priority: route.route.priority ?? 0, test: compileExpression(expression), rank: 0, expression };
}

export class ExpressionIndex {
  private readonly exactHosts = new HostMap();
  private readonly suffixHosts = new HostMap();
  private readonly prefixHosts = new HostMap();
  private readonly anyHost = new PathIndex();
  private readonly state: MatchState = { matched: null, pattern: null };
  private best: ExpressionMatch | null = null;
  private bestRank = Infinity;

  /** `entries` ranked, with their ranks set */
  constructor(entries: ReadonlyArray<ExpressionEntry & { expression: AtcExpression }>) {
    for (const entry of entries) {
      const keys = keysOf(entry.expression);
      const indexes: PathIndex[] = [];
      if (keys.hosts === null) indexes.push(this.anyHost);
      else {
        for (const [op, names] of keys.hosts) {
          const map = op === '==' ? this.exactHosts : op === '=^' ? this.suffixHosts : this.prefixHosts;
          for (const name of names) {
            const index = map.indexOf(name);
            if (!indexes.includes(index)) indexes.push(index);
          }
        }
      }
      for (const index of indexes) {
        if (keys.exactPaths === null) index.rest.push(entry);
        else {
          for (const path of keys.exactPaths) file(index.exact, path, entry);
          for (const prefix of keys.prefixes!) file(index.prefix, prefix, entry);
        }
      }
    }
    this.exactHosts.seal();
    this.suffixHosts.seal();
    this.prefixHosts.seal();
    this.anyHost.seal();
  }

  /** The best-ranked expression route matching `req` that ranks before `bound`, or null. */
  search(req: ExpressionRequest, bound: number): ExpressionMatch | null {
    this.best = null;
    this.bestRank = bound;
    const host = req.host;
    const exact = this.exactHosts.byKey.get(host);
    if (exact !== undefined) this.searchPaths(exact, req);
    for (const length of this.suffixHosts.lengths) {
      if (length > host.length) break;
      const index = this.suffixHosts.byKey.get(host.slice(host.length - length));
      if (index !== undefined) this.searchPaths(index, req);
    }
    for (const length of this.prefixHosts.lengths) {
      if (length > host.length) break;
      const index = this.prefixHosts.byKey.get(host.slice(0, length));
      if (index !== undefined) this.searchPaths(index, req);
    }
    this.searchPaths(this.anyHost, req);
    const best = this.best;
    this.best = null;
    return best;
  }

  private searchPaths(index: PathIndex, req: ExpressionRequest): void {
    const path = req.path;
    const exact = index.exact.get(path);
    if (exact !== undefined) this.firstMatch(exact, req);
    for (const length of index.prefixLengths) {
      if (length > path.length) break;
      const list = index.prefix.get(length === path.length ? path : path.slice(0, length));
      if (list !== undefined) this.firstMatch(list, req);
    }
    this.firstMatch(index.rest, req);
  }

  private firstMatch(list: ExpressionEntry[], req: ExpressionRequest): void {
    const m = this.state;
    for (const entry of list) {
      if (entry.rank >= this.bestRank) return;
      m.matched = null;
      m.pattern = null;
      if (!entry.test(req, m)) continue;
      this.best = { entry, matched: m.matched ?? '', pattern: m.pattern };
      this.bestRank = entry.rank;
      return;
    }
  }
}
