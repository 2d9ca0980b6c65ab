import type { RouteEntry } from './route-entries';

/**
 * Matchers of one host key: by prefix path; by the literal text their regex paths start with; and the rest (regexes
 * without such a text, no paths) in rank order.
 */
export class PathBuckets {
  readonly byPrefix = new Map<string, RouteEntry[]>();
  readonly byRegexPrefix = new Map<string, RouteEntry[]>();
  /** the distinct key lengths of each map, shortest first */
  lengths: number[] = [];
  regexLengths: number[] = [];
  readonly rest: RouteEntry[] = [];

  add(entry: RouteEntry): void {
    if (entry.prefixes !== null) for (const prefix of entry.prefixes) file(this.byPrefix, prefix, entry);
    else if (entry.regexPrefixes !== null) for (const prefix of entry.regexPrefixes) file(this.byRegexPrefix, prefix, entry);
    else if (!this.rest.includes(entry)) this.rest.push(entry);
  }

  seal(): void {
    for (const list of this.byPrefix.values()) list.sort(byRank);
    for (const list of this.byRegexPrefix.values()) list.sort(byRank);
    this.rest.sort(byRank);
    this.lengths = distinctLengths(this.byPrefix.keys());
    this.regexLengths = distinctLengths(this.byRegexPrefix.keys());
  }
}

function file(map: Map<string, RouteEntry[]>, key: string, entry: RouteEntry): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [entry]);
  else if (!list.includes(entry)) list.push(entry);
}

/** Host keys of one kind (exact names, wildcard suffixes or wildcard prefixes) → their matchers. */
export class HostBuckets {
  readonly byKey = new Map<string, PathBuckets>();
  lengths: number[] = [];

  add(key: string, entry: RouteEntry): void {
    let buckets = this.byKey.get(key);
    if (buckets === undefined) this.byKey.set(key, (buckets = new PathBuckets()));
    buckets.add(entry);
  }

  seal(): void {
    for (const buckets of this.byKey.values()) buckets.seal();
    this.lengths = distinctLengths(this.byKey.keys());
  }
}

const byRank = (a: RouteEntry, b: RouteEntry) => a.rank - b.rank;

function distinctLengths(keys: Iterable<string>): number[] {
  const lengths = new Set<number>();
  for (const key of keys) lengths.add(key.length);
  return [...lengths].sort((a, b) => a - b);
}
