import { randomUUID } from 'node:crypto';
import type { Exchange } from '../pipeline/exchange';
import type { HashRule, UpstreamSpec } from './spec';

function cookieValue(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Regexes of the route's regex paths, compiled once per route object. */
const routeRegexes = new WeakMap<object, RegExp[]>();

function uriCapture(ex: Exchange, name: string): string | null {
  let regexes = routeRegexes.get(ex.route);
  if (regexes === undefined) {
    regexes = [];
    for (const p of ex.route.paths ?? []) {
      if (!p.startsWith('~')) continue;
      try {
        regexes.push(new RegExp(`^${p.slice(1)}`));
      } catch {}
    }
    routeRegexes.set(ex.route, regexes);
  }
  for (const re of regexes) {
    const m = re.exec(ex.path);
    if (m === null) continue;
    const value = /^\d+$/.test(name) ? m[Number(name)] : m.groups?.[name];
    if (value !== undefined) return value;
  }
  return null;
}

function keyFrom(rule: HashRule, ex: Exchange, spec: UpstreamSpec): string | null {
  switch (rule.source) {
    case 'consumer':
      return ex.consumer?.id ?? ex.credential?.identifier ?? null;
    case 'ip':
      return ex.clientIp;
    case 'header': {
      const value = ex.headers[rule.name!];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(',') : value;
    }
    case 'cookie': {
      const header = ex.headers.cookie;
      const found = cookieValue(Array.isArray(header) ? header.join(';') : header, rule.name!);
      if (found !== null) return found;
      // Kong hands out the cookie so the client's next requests land on the same target
      const value = randomUUID();
      ex.response.setHeader('set-cookie', `${rule.name}=${value}; Path=${spec.cookiePath}`);
      return value;
    }
    case 'path':
      return ex.path;
    case 'query_arg': {
      const values = ex.query.getAll(rule.name!);
      return values.length > 0 ? values.join(',') : null;
    }
    case 'uri_capture':
      return uriCapture(ex, rule.name!);
    default:
      return null;
  }
}

/** The key consistent hashing places a request by: `hash_on`, else `hash_fallback`; null = no key. */
export function hashKeyOf(spec: UpstreamSpec, ex: Exchange): string | null {
  if (spec.algorithm !== 'consistent-hashing' || spec.hashOn.source === 'none') return null;
  return keyFrom(spec.hashOn, ex, spec) ?? (spec.hashFallback.source === 'none' ? null : keyFrom(spec.hashFallback, ex, spec));
}
