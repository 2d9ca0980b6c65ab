import type { PluginContext } from '../contract';
import type { SessionConfig } from './schema';

/** Methods whose body may carry the logout argument (Kong's list). */
const BODY_METHODS = new Set(['DELETE', 'PATCH', 'POST', 'PUT']);

function firstHeader(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** Whether the body (form-encoded or JSON) has the argument `name`. */
async function bodyHas(ctx: PluginContext, name: string): Promise<boolean> {
  const type = firstHeader(ctx.req.headers['content-type']).toLowerCase();
  const body = (await ctx.req.readBody()).toString('utf8');
  if (type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams(body).has(name);
  if (type.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(body);
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.hasOwn(parsed, name);
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * Kong's logout rule: the method is one of `logout_methods`, and the query has `logout_query_arg`, or (with
 * `read_body_for_logout`, for a method with a body) the body has `logout_post_arg`.
 */
export function isLogout(ctx: PluginContext, config: SessionConfig): boolean | Promise<boolean> {
  if (config.logout_methods === null || !config.logout_methods.includes(ctx.req.method as 'GET')) return false;
  if (config.logout_query_arg !== null && ctx.req.query.has(config.logout_query_arg)) return true;
  if (!config.read_body_for_logout || config.logout_post_arg === null || !BODY_METHODS.has(ctx.req.method)) return false;
  return bodyHas(ctx, config.logout_post_arg);
}
