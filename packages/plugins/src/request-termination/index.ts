import { definePlugin } from '../contract';
import { requestTerminationAccess } from './handler';
import { checkRequestTerminationConfig, requestTerminationConfigSchema, type RequestTerminationConfig } from './schema';

/** Answers requests itself instead of proxying; may be scoped to a consumer (the anonymous one included). */
export const requestTermination = definePlugin<RequestTerminationConfig, unknown>({
  name: 'request-termination',
  priority: 2,
  version: '3.9.0',
  configSchema: requestTerminationConfigSchema,
  auth: false,
  noConsumer: false,
  checkConfig: checkRequestTerminationConfig,
  access: requestTerminationAccess,
});
