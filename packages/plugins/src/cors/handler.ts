import type { PluginContext, PluginResponse, ResponseChanges, UpstreamResponse } from '../contract';
import { perConfig } from '../shared/per-config';
import type { CorsConfig } from './schema';

/** One entry of `origins` as Kong reads it: a literal origin, or a regular expression. */
type OriginRule = { regex: null; domain: string } | { regex: RegExp; byHost: boolean };

/** What a config decides, prepared once per config. */
interface CorsPlan {
  /** no origins, or only `*`: `*` is answered */
  allowAll: boolean;
  /** a single literal origin: always sent back as configured, whatever the request's Origin */
  single: string | null;
  /** `*` is among several origins: `*` is answered to any request with an Origin */
  starAmong: boolean;
  rules: OriginRule[];
  methods: string;
  /** the configured `headers`, joined; null = echo Access-Control-Request-Headers */
  headers: string | null;
  exposed: string | null;
  maxAge: string | null;
}

/** An entry made only of these characters is a literal origin; anything else makes it a regular expression. */
const LITERAL_ORIGIN = /^[A-Za-z0-9.:/-]+$/;

/** An origin as Kong compares it: `scheme://host[:port]` (the scheme's default port dropped), and its host alone. */
export interface NormalizedOrigin {
  domain: string;
  host: string;
}

/**
 * `scheme://host[:port]` with the scheme's default port dropped and the scheme and host lower-cased; a value without
 * a scheme (`example.test`) is its own domain and host, as Kong's URL parser leaves it.
 */
export function normalizeOrigin(value: string): NormalizedOrigin {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/:]+|\[[^\]]+\])(?::(\d+))?\/?$/i.exec(value.trim());
  if (match === null) return { domain: value, host: value };
  const scheme = match[1]!.toLowerCase();
  const host = match[2]!.toLowerCase();
  const port = match[3];
  const defaultPort = scheme === 'https' ? '443' : scheme === 'http' ? '80' : null;
  return { domain: port === undefined || port === defaultPort ? `${scheme}://${host}` : `${scheme}://${host}:${port}`, host };
}

/**
 * Kong's reading of a regex entry: anchored at both ends (a leading `^` and a trailing `$` are the user's own
 * anchors); without a `:` it is matched against the origin's host only (`by_host`), so `(.*[./])?example\.org` allows
 * `http://example.org:8080`.
 */
export function originRule(entry: string): OriginRule {
  if (LITERAL_ORIGIN.test(entry)) return { regex: null, domain: normalizeOrigin(entry).domain };
  const body = entry.startsWith('^') ? entry.slice(1) : entry;
  return { regex: new RegExp(`^(?:${body.endsWith('$') ? body.slice(0, -1) : body})$`), byHost: !entry.includes(':') };
}

const planOf = perConfig((config: CorsConfig): CorsPlan => {
  const origins = config.origins ?? [];
  const allowAll = origins.length === 0 || (origins.length === 1 && origins[0] === '*');
  const single = origins.length === 1 && LITERAL_ORIGIN.test(origins[0]!) ? origins[0]! : null;
  const starAmong = !allowAll && origins.includes('*');
  return {
    allowAll,
    single,
    starAmong,
    rules: allowAll || single !== null || starAmong ? [] : origins.map(originRule),
    methods: config.methods.join(','),
    headers: config.headers !== null && config.headers.length > 0 ? config.headers.join(',') : null,
    exposed: config.exposed_headers !== null && config.exposed_headers.length > 0 ? config.exposed_headers.join(',') : null,
    maxAge: config.max_age !== null ? String(config.max_age) : null,
  };
});

function header(ctx: PluginContext, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The origin to send back for a request's Origin, or null when no rule allows it. */
export function matchOrigin(rules: readonly OriginRule[], origin: string): string | null {
  const normalized = normalizeOrigin(origin);
  for (const rule of rules) {
    const found = rule.regex === null ? rule.domain === normalized.domain : rule.regex.test(rule.byHost ? normalized.host : normalized.domain);
    if (found) return normalized.domain;
  }
  return null;
}

/**
 * Kong's configure_origin and configure_credentials: sets Access-Control-Allow-Origin (and `Vary: Origin` whenever
 * the answer depends on the Origin) and Access-Control-Allow-Credentials. Returns whether an origin was allowed;
 * when none is, the upstream's own Access-Control-Allow-Origin is removed (see `corsResponse`).
 */
function allowOrigin(ctx: PluginContext, out: ResponseChanges, plan: CorsPlan, config: CorsConfig): boolean {
  const origin = header(ctx, 'origin');
  let allowed: string | null = null;
  let all = plan.allowAll;
  if (!all) {
    out.setHeader('Vary', 'Origin');
    if (plan.single !== null) allowed = plan.single;
    else if (origin !== undefined) {
      if (plan.starAmong) all = true;
      else allowed = matchOrigin(plan.rules, origin);
    }
  }
  if (all) out.setHeader('Access-Control-Allow-Origin', '*');
  else if (allowed !== null) out.setHeader('Access-Control-Allow-Origin', allowed);
  if (config.credentials) {
    if (!all) out.setHeader('Access-Control-Allow-Credentials', 'true');
    else if (origin !== undefined) {
      // `*` cannot go with credentials: the request's own origin is sent back instead
      out.setHeader('Vary', 'Origin');
      out.setHeader('Access-Control-Allow-Origin', origin);
      out.setHeader('Access-Control-Allow-Credentials', 'true');
    }
  }
  return all || allowed !== null;
}

const PREFLIGHT_ANSWER: PluginResponse = Object.freeze({ status: 200, body: null });
/** kept from `access` to `response`: the response's CORS headers were decided (not a preflight) */
const DECIDED = 'cors';

/**
 * Kong's cors: a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered by the gateway with
 * the allowed origin, methods, headers and max age, unless `preflight_continue` sends it on to the upstream without
 * any CORS header; every other request gets the origin, credentials and exposed headers on whatever response it
 * receives: the upstream's, another plugin's refusal, or the gateway's own error.
 */
export function corsAccess(ctx: PluginContext, config: CorsConfig): PluginResponse | void {
  const out = ctx.response;
  if (out === undefined) return;
  const preflight = ctx.req.method === 'OPTIONS' && header(ctx, 'origin') !== undefined && header(ctx, 'access-control-request-method') !== undefined;
  if (preflight && config.preflight_continue) return;
  const plan = planOf(config);
  const allowed = allowOrigin(ctx, out, plan, config);
  if (!preflight) {
    if (plan.exposed !== null) out.setHeader('Access-Control-Expose-Headers', plan.exposed);
    ctx.locals?.set(DECIDED, allowed);
    return;
  }
  const requested = header(ctx, 'access-control-request-headers');
  const headers = plan.headers ?? requested;
  if (headers !== undefined) out.setHeader('Access-Control-Allow-Headers', headers);
  out.setHeader('Access-Control-Allow-Methods', plan.methods);
  if (plan.maxAge !== null) out.setHeader('Access-Control-Max-Age', plan.maxAge);
  if (config.private_network && header(ctx, 'access-control-request-private-network') === 'true') {
    out.setHeader('Access-Control-Allow-Private-Network', 'true');
  }
  return PREFLIGHT_ANSWER;
}

function asList(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/**
 * On the upstream's response: its own `Vary` is kept, `Origin` added after it (Kong adds the header rather than
 * replacing it), and when no origin was allowed its own Access-Control-Allow-Origin is removed, as Kong clears it.
 */
export function corsResponse(ctx: PluginContext, _config: CorsConfig, res: UpstreamResponse): void {
  const allowed = ctx.locals?.get(DECIDED);
  if (allowed === undefined) return;
  const ownVary = res.setByPlugins?.has('vary') === true ? res.replaced?.vary : undefined;
  if (ownVary !== undefined) res.headers.vary = [...asList(ownVary), ...asList(res.headers.vary ?? [])];
  if (allowed === false && res.setByPlugins?.has('access-control-allow-origin') !== true) delete res.headers['access-control-allow-origin'];
}
