import { createHash } from 'node:crypto';

/** Kong's prefix when neither a consumer nor a route identifies the request. */
const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';

type Values = ReadonlyMap<string, readonly string[]>;

/** `name=value` pieces joined by `:`, repeated values sorted and joined by `,`, in the order of `names`. */
function keyFrom(values: Values, names: readonly string[]): string {
  const parts: string[] = [];
  for (const name of names) {
    const found = values.get(name);
    if (found === undefined) continue;
    parts.push(found.length === 1 ? `${name}=${found[0]}` : `${name}=${[...found].sort().join(',')}`);
  }
  return parts.join(':');
}

export interface CacheKeyInput {
  consumerId: string | null;
  routeId: string | null;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Kong's proxy-cache key: sha256 (hex) of `prefix|method|path|params|headers`, where prefix is `consumer:route`, the
 * route, or the empty UUID; params are every query argument sorted by name (or only `vary_query_params`, in their
 * order); headers are the `vary_headers` only.
 */
export function cacheKey(input: CacheKeyInput, varyQuery: readonly string[] | null, varyHeaders: readonly string[] | null): string {
  const prefix = input.consumerId !== null && input.routeId !== null ? `${input.consumerId}:${input.routeId}` : (input.routeId ?? EMPTY_UUID);
  const params = new Map<string, string[]>();
  for (const [name, value] of input.query) {
    const list = params.get(name);
    if (list === undefined) params.set(name, [value]);
    else list.push(value);
  }
  const paramNames = varyQuery !== null && varyQuery.length > 0 ? varyQuery : [...params.keys()].sort();
  let headerPart = '';
  if (varyHeaders !== null && varyHeaders.length > 0) {
    const headers = new Map<string, string[]>();
    for (const name of varyHeaders) {
      const value = input.headers[name.toLowerCase()];
      if (value !== undefined) headers.set(name, typeof value === 'string' ? [value] : value);
    }
    headerPart = keyFrom(headers, varyHeaders);
  }
  const plain = `${prefix}|${input.method}|${input.path}|${keyFrom(params, paramNames)}|${headerPart}`;
  return createHash('sha256').update(plain).digest('hex');
}
