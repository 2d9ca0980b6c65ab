import { definePlugin } from '../contract';
import { jwtIndex, type JwtIndex } from './credential-index';
import { jwtSecrets } from './entities';
import { jwtAuthenticate } from './handler';
import { checkJwtConfig, jwtConfigSchema, type JwtConfig } from './schema';

export const jwt = definePlugin<JwtConfig, JwtIndex>({
  name: 'jwt',
  priority: 1450,
  version: '3.9.0',
  configSchema: jwtConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [jwtSecrets],
  checkConfig: checkJwtConfig,
  credentialIndex: jwtIndex,
  authenticate: jwtAuthenticate,
});
