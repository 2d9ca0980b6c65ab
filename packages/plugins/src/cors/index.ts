import { definePlugin } from '../contract';
import { corsAccess, corsResponse } from './handler';
import { corsConfigSchema, type CorsConfig } from './schema';

/** Cross-origin resource sharing; runs first (Kong's priority 2000), so preflights are answered before authentication. */
export const cors = definePlugin<CorsConfig, unknown>({
  name: 'cors',
  priority: 2000,
  version: '3.9.0',
  configSchema: corsConfigSchema,
  auth: false,
  noConsumer: true,
  access: corsAccess,
  response: corsResponse,
});
