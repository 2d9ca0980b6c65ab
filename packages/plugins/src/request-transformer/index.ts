import { definePlugin } from '../contract';
import { requestTransformerAccess } from './handler';
import { requestTransformerConfigSchema, type RequestTransformerConfig } from './schema';

/** Rewrites the request on its way upstream: method, path, headers, query string, form and JSON bodies. */
export const requestTransformer = definePlugin<RequestTransformerConfig, unknown>({
  name: 'request-transformer',
  priority: 801,
  version: '3.9.0',
  configSchema: requestTransformerConfigSchema,
  auth: false,
  noConsumer: false,
  access: requestTransformerAccess,
});
