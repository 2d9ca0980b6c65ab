import { definePlugin } from '../contract';
import { responseTransformerResponse } from './handler';
import { responseTransformerConfigSchema, type ResponseTransformerConfig } from './schema';

/** Rewrites the upstream's response: headers, and the top-level members of JSON bodies. */
export const responseTransformer = definePlugin<ResponseTransformerConfig, unknown>({
  name: 'response-transformer',
  priority: 800,
  version: '3.9.0',
  configSchema: responseTransformerConfigSchema,
  auth: false,
  noConsumer: false,
  response: responseTransformerResponse,
});
