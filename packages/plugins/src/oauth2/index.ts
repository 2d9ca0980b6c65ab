import { definePlugin, type PluginContext } from '../contract';
import { oauth2Authenticate } from './access';
import { serveAuthorize } from './authorize-endpoint';
import { oauth2Index, type OAuth2Index } from './credential-index';
import { oauth2Credentials } from './entities';
import { endpointResponse } from './grants';
import { oauth2Stores, tokenStoreOf } from './runtime-store';
import { checkOAuth2Config, oauth2ConfigSchema, type OAuth2Config } from './schema';
import { serveToken } from './token-endpoint';

type Endpoint = 'token' | 'authorize';

/** Which of the plugin's endpoints a path names: it ends with `/oauth2/token` or `/oauth2/authorize` (slash allowed). */
export function oauth2EndpointOf(path: string): Endpoint | null {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  if (trimmed.endsWith('/oauth2/token')) return 'token';
  if (trimmed.endsWith('/oauth2/authorize')) return 'authorize';
  return null;
}

/** Kong's 405 for another method than POST; the authorize endpoint is called the "authorization" endpoint there. */
function invalidMethod(method: string, endpoint: Endpoint, config: OAuth2Config) {
  const description = `The HTTP method ${method} is invalid for the ${endpoint === 'token' ? 'token' : 'authorization'} endpoint`;
  const realm = config.realm === null ? '' : ` realm="${config.realm}"`;
  return endpointResponse(405, { error: 'invalid_method', error_description: description }, { 'www-authenticate': `Bearer${realm} error="invalid_method" error_description="${description}"` });
}

function serve(ctx: PluginContext<OAuth2Index>, config: OAuth2Config) {
  const endpoint = oauth2EndpointOf(ctx.req.path)!;
  if (ctx.req.method !== 'POST') return invalidMethod(ctx.req.method, endpoint, config);
  const store = tokenStoreOf(ctx.runtime);
  return endpoint === 'token' ? serveToken(ctx, config, store) : serveAuthorize(ctx, config, store);
}

export const oauth2 = definePlugin<OAuth2Config, OAuth2Index>({
  name: 'oauth2',
  priority: 1400,
  version: '3.9.0',
  configSchema: oauth2ConfigSchema,
  auth: true,
  noConsumer: true,
  entities: [oauth2Credentials],
  init: oauth2Stores.init,
  checkConfig: checkOAuth2Config,
  credentialIndex: oauth2Index,
  authenticate: oauth2Authenticate,
  endpoint: {
    matches: (ctx) => oauth2EndpointOf(ctx.req.path) !== null,
    serve,
  },
});
