import { definePlugin } from '../contract';
import { rateLimitingState } from './handler';
import { checkRateLimitingConfig, rateLimitingConfigSchema, rateLimitingShorthands, type RateLimitingConfig } from './schema';

/** Limits requests per second … year; runs after authentication and may be scoped to a consumer (the anonymous one included). */
export const rateLimiting = definePlugin<RateLimitingConfig, unknown>({
  name: 'rate-limiting',
  priority: 910,
  version: '3.9.0',
  configSchema: rateLimitingConfigSchema,
  auth: false,
  noConsumer: false,
  checkConfig: checkRateLimitingConfig,
  shorthandFields: rateLimitingShorthands,
  init: rateLimitingState.init,
  access: (ctx, config) => rateLimitingState.of(ctx.runtime).access(ctx, config),
});
