import { definePlugin } from '../contract';
import { buildKeyAuthIndex, KEY_AUTH_INDEX_SECTIONS, updateKeyAuthIndex, type KeyAuthIndex } from './credential-index';
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
  compile: buildKeyAuthIndex,
  indexSections: KEY_AUTH_INDEX_SECTIONS,
  updateIndex: updateKeyAuthIndex,
  authenticate: keyAuthAuthenticate,
});
