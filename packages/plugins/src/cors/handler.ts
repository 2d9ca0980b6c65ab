import type { PluginContext, PluginResponse, ResponseChanges } from '../contract';
import { perConfig } from '../shared/per-config';
import type { CorsConfig } from './schema';

/** What a config decides, prepared once per config. */
interface CorsPlan {
  /** no origins, or only `*`: every origin is allowed */
  allowAll: boolean;
  exact: Set<string>;
  patterns: RegExp[];
  methods: string;
  /** the configured `headers`, joined; null = echo Access-Control-Request-Headers */
  headers: string | null;
  exposed: string | null;
  maxAge: string | null;
}

/** An entry made only of these characters is a literal origin; anything else makes it a regular expression. */
const LITERAL_ORIGIN = /^[A-Za-z0-9.:/-]+$/;

/** `scheme://host[:port]` with the scheme's default port dropped and the scheme and host lower-cased. */
export function normalizeOrigin(value: string): string {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/:]+|\[[^\]]+\])(?::(\d+))?\/?$/i.exec(value.trim());
  if (match === null) return value;
  const scheme = match[1]!.toLowerCase();
  const host = match[2]!.toLowerCase();
  const port = match[3];
  const defaultPort = scheme === 'https' ? '443' : scheme === 'http' ? '80' : null;
  return port === undefined || port === defaultPort ? `${scheme}://${host}` : `${scheme}://${host}:${port}`;
}

const planOf = perConfig((config: CorsConfig): CorsPlan => {
  const origins = config.origins ?? [];
  const allowAll = origins.length === 0 || (origins.length === 1 && origins[0] === '*');
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const entry of origins) {
    if (entry === '*') patterns.push(/^.*$/);
    else if (LITERAL_ORIGIN.test(entry)) exact.add(normalizeOrigin(entry));
    else patterns.push(new RegExp(`^(?:${entry})$`));
  }
  return {
    allowAll,
    exact,
    patterns,
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

function originAllowed(plan: CorsPlan, origin: string): boolean {
  if (plan.exact.has(origin) || (plan.exact.size > 0 && plan.exact.has(normalizeOrigin(origin)))) return true;
  for (const pattern of plan.patterns) if (pattern.test(origin)) return true;
  return false;
}

/**
 * Sets Access-Control-Allow-Origin (and Vary: Origin when the answer depends on the Origin). With every origin
 * allowed and no credentials the answer is `*`; with credentials the request's own origin is sent back, since
 * browsers refuse `*` on credentialed requests.
 */
function allowOrigin(ctx: PluginContext, out: ResponseChanges, plan: CorsPlan, config: CorsConfig): void {
  const origin = header(ctx, 'origin');
  if (plan.allowAll) {
    if (config.credentials && origin !== undefined) {
      out.setHeader('Access-Control-Allow-Origin', origin);
      out.setHeader('Vary', 'Origin');
    } else {
      out.setHeader('Access-Control-Allow-Origin', '*');
    }
    if (config.credentials) out.setHeader('Access-Control-Allow-Credentials', 'true');
    return;
  }
  out.setHeader('Vary', 'Origin');
  if (origin === undefined || !originAllowed(plan, origin)) return;
  out.setHeader('Access-Control-Allow-Origin', origin);
  if (config.credentials) out.setHeader('Access-Control-Allow-Credentials', 'true');
}

const PREFLIGHT_ANSWER: PluginResponse = Object.freeze({ status: 200, body: null });

/**
 * Kong's cors: a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered by the gateway with
 * the allowed origin, methods, headers and max age, unless `preflight_continue` sends it on to the upstream; every
 * other request gets the origin, credentials and exposed headers on whatever response it receives.
 */
export function corsAccess(ctx: PluginContext, config: CorsConfig): PluginResponse | void {
  const out = ctx.response;
  if (out === undefined) return;
  const plan = planOf(config);
  const preflight = ctx.req.method === 'OPTIONS' && header(ctx, 'origin') !== undefined && header(ctx, 'access-control-request-method') !== undefined;
  allowOrigin(ctx, out, plan, config);
  if (!preflight) {
    if (plan.exposed !== null) out.setHeader('Access-Control-Expose-Headers', plan.exposed);
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
  if (config.preflight_continue) return;
  return PREFLIGHT_ANSWER;
}
