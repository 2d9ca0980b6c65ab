import { definePlugin } from '../contract';
import { basicAuthIndex, type BasicAuthIndex } from './credential-index';
import { basicAuthCredentials } from './entities';
import { basicAuthAuthenticate } from './handler';
import { basicAuthConfigSchema, type BasicAuthConfig } from './schema';

export const basicAuth = definePlugin<BasicAuthConfig, BasicAuthIndex>({
  name: 'basic-auth',
  priority: 1100,
  version: '3.9.0',
  configSchema: basicAuthConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [basicAuthCredentials],
  credentialIndex: basicAuthIndex,
  authenticate: basicAuthAuthenticate,
});
