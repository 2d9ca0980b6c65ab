import { definePlugin } from '../contract';
import { redirectAccess } from './handler';
import { redirectConfigSchema, type RedirectConfig } from './schema';

/** Redirects every request; Kong's priority 779 runs it after limits and transformations, before AI plugins. */
export const redirect = definePlugin<RedirectConfig, unknown>({
  name: 'redirect',
  priority: 779,
  version: '3.9.0',
  configSchema: redirectConfigSchema,
  auth: false,
  noConsumer: false,
  access: redirectAccess,
});
