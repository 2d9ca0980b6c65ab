import { definePlugin } from '../contract';
import { keyAuthCredentials } from './entities';
import { keyAuthConfigSchema, type KeyAuthConfig } from './schema';

export const keyAuth = definePlugin<KeyAuthConfig, unknown>({
  name: 'key-auth',
  priority: 1250,
  version: '3.9.0',
  configSchema: keyAuthConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [keyAuthCredentials],
});
