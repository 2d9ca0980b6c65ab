import { definePlugin } from '../contract';
import { requestSizeLimitingAccess } from './handler';
import { requestSizeLimitingConfigSchema, type RequestSizeLimitingConfig } from './schema';

/** Refuses request bodies past a size (413 "Request size limit exceeded"), counting chunked bodies as they stream. */
export const requestSizeLimiting = definePlugin<RequestSizeLimitingConfig, unknown>({
  name: 'request-size-limiting',
  priority: 951,
  version: '3.9.0',
  configSchema: requestSizeLimitingConfigSchema,
  auth: false,
  noConsumer: false,
  access: requestSizeLimitingAccess,
});
