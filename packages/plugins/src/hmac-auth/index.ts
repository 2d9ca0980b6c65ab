import { definePlugin } from '../contract';
import { hmacAuthIndex, type HmacAuthIndex } from './credential-index';
import { hmacAuthCredentials } from './entities';
import { hmacAuthAuthenticate } from './handler';
import { hmacAuthConfigSchema, type HmacAuthConfig } from './schema';

export const hmacAuth = definePlugin<HmacAuthConfig, HmacAuthIndex>({
  name: 'hmac-auth',
  priority: 1030,
  version: '3.9.0',
  configSchema: hmacAuthConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [hmacAuthCredentials],
  credentialIndex: hmacAuthIndex,
  authenticate: hmacAuthAuthenticate,
});
