import { definePlugin } from '../contract';
import { createResponseRateLimiter } from './handler';
import { responseRateLimitingConfigSchema, type ResponseRateLimitingConfig } from './schema';

/** The bundled plugin's limiter: process-wide local counters, its own Redis connections. */
export const responseRateLimiter = createResponseRateLimiter();

/** Limits what the upstream says a request used (Kong's priority 900, after rate-limiting). */
export const responseRateLimiting = definePlugin<ResponseRateLimitingConfig, unknown>({
  name: 'response-ratelimiting',
  priority: 900,
  version: '3.9.0',
  configSchema: responseRateLimitingConfigSchema,
  auth: false,
  noConsumer: false,
  access: (ctx, config) => responseRateLimiter.access(ctx, config),
  response: (ctx, config, res) => responseRateLimiter.response(ctx, config, res),
  log: (ctx, config) => responseRateLimiter.log(ctx, config),
});
