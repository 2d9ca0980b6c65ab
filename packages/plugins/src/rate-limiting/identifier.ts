import type { PluginContext } from '../contract';
import type { RateLimitingConfig } from './schema';

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whose budget a request spends, as Kong picks it; the client IP whenever the chosen thing is absent:
 * consumer → the consumer authentication chose (the anonymous one is one shared budget), else the credential;
 * credential; service; header → the value of `header_name`; path → `path` when the request is for exactly that path.
 */
export function identifierOf(ctx: PluginContext, config: RateLimitingConfig): string {
  const ip = ctx.req.clientIp;
  switch (config.limit_by) {
    case 'consumer':
      return ctx.consumer?.id ?? ctx.credential?.id ?? ip;
    case 'credential':
      return ctx.credential?.id ?? ip;
    case 'service':
      return ctx.service?.id ?? ip;
    case 'header': {
      const value = config.header_name === null ? undefined : firstValue(ctx.req.headers[config.header_name.toLowerCase()]);
      return value === undefined || value === '' ? ip : value;
    }
    case 'path':
      return config.path !== null && ctx.req.path === config.path ? config.path : ip;
    default:
      return ip;
  }
}
