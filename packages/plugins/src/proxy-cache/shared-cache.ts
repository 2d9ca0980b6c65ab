import type { PluginContext, UpstreamResponse } from '../contract';
import { parseCacheControl } from './cache-control';

/**
 * The rules that make proxy-cache a safe shared cache (decision 29, RFC 9111 §3 and §4.1), the same for every
 * strategy:
 * - a response with `Set-Cookie` is never stored;
 * - a response to a request carrying `Authorization` or `Cookie` is stored only when a consumer was identified (its id
 *   is part of the key, as in Kong; the anonymous consumer identifies nobody) or the response says `public`,
 *   `s-maxage` or `must-revalidate`;
 * - `Vary: *` is never stored; the request headers a response names in `Vary` are part of its key: the values the
 *   storing request had are kept with the entry, and a request with other values does not get it (it is a miss, and
 *   its own response takes the place).
 */

/** The request headers a response varies on, with the values of the request that fetched it (null = absent). */
export type VaryValues = Record<string, string | null>;

/** A header as the upstream sent it, even where a plugin's value replaced it for the client. */
function upstreamHeader(res: UpstreamResponse, name: string): string | string[] | undefined {
  return res.setByPlugins?.has(name) === true ? res.replaced?.[name] : res.headers[name];
}

function joined(value: string | readonly string[] | undefined): string | null {
  if (value === undefined) return null;
  return (typeof value === 'string' ? value : value.join(', ')).trim();
}

/** The header names in `Vary`, lower-cased and sorted; null for `Vary: *`. */
export function varyNames(vary: string | string[] | undefined): string[] | null {
  const names = new Set<string>();
  for (const part of (joined(vary) ?? '').split(',')) {
    const name = part.trim().toLowerCase();
    if (name === '*') return null;
    if (name !== '') names.add(name);
  }
  return [...names].sort();
}

/** The request's values of the headers named. */
export function varyValues(ctx: PluginContext, names: readonly string[]): VaryValues {
  const values: VaryValues = {};
  for (const name of names) values[name] = joined(ctx.req.headers[name]);
  return values;
}

/** The entry was fetched with the same values of the headers its response varies on as this request has. */
export function varyMatches(ctx: PluginContext, stored: VaryValues | undefined): boolean {
  if (stored === undefined) return true;
  for (const name in stored) if (joined(ctx.req.headers[name]) !== stored[name]) return false;
  return true;
}

const SHARED_OK = ['public', 's-maxage', 'must-revalidate'];

/**
 * Whether a response may go into the shared cache, and the request values it then varies on; null when it may not.
 */
export function sharedStorable(ctx: PluginContext, res: UpstreamResponse): { vary: VaryValues | undefined } | null {
  if (res.headers['set-cookie'] !== undefined || upstreamHeader(res, 'set-cookie') !== undefined) return null;
  const headers = ctx.req.headers;
  const identified = ctx.consumer !== null && !ctx.anonymous;
  if ((headers.authorization !== undefined || headers.cookie !== undefined) && !identified) {
    const cc = parseCacheControl(upstreamHeader(res, 'cache-control'));
    if (!SHARED_OK.some((directive) => cc.has(directive))) return null;
  }
  const names = varyNames(upstreamHeader(res, 'vary'));
  if (names === null) return null;
  return { vary: names.length === 0 ? undefined : varyValues(ctx, names) };
}
