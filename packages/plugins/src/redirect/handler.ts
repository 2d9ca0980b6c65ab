import type { PluginContext, PluginResponse } from '../contract';
import type { RedirectConfig } from './schema';

/**
 * The `Location` a request is sent to: `location` as configured, or, with `keep_incoming_path`, that URL with its
 * path and query replaced by the request's own (a request without a query drops the configured one), parsed and
 * serialised by the WHATWG URL rules as Kong does with ada.
 */
export function redirectLocation(config: RedirectConfig, path: string, rawQuery: string): string {
  if (!config.keep_incoming_path) return config.location;
  const url = new URL(config.location);
  url.pathname = path;
  url.search = rawQuery;
  return url.href;
}

/** Answers every request with the configured redirect; nothing is proxied. */
export function redirectAccess(ctx: PluginContext, config: RedirectConfig): PluginResponse {
  const rawQuery = ctx.req.rawQuery ?? ctx.req.query.toString();
  return { status: config.status_code, body: 'redirecting', headers: { location: redirectLocation(config, ctx.req.path, rawQuery) } };
}
