import { definePlugin } from '../contract';
import { keyAuthIndex, type KeyAuthIndex } from './credential-index';
import { keyAuthCredentials } from './entities';
import { keyAuthAuthenticate } from './handler';
import { keyAuthConfigSchema, type KeyAuthConfig } from './schema';

export const keyAuth = definePlugin<KeyAuthConfig, KeyAuthIndex>({
  name: 'key-auth',
  priority: 1250,
  version: '3.9.0',
  configSchema: keyAuthConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [keyAuthCredentials],
  credentialIndex: keyAuthIndex,
  authenticate: keyAuthAuthenticate,
});
