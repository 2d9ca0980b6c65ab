import type { PluginResponse } from '../contract';
import type { OAuth2Client } from './credential-index';
import { blank, endpointResponse, httpsProblem, issueToken, oauthError, retrieveScope, serviceBinding, type OAuth2Context, type OAuthError } from './grants';
import { readParams, type OAuth2Params } from './params';
import { pkceVerifierProblem } from './pkce';
import type { OAuth2Config } from './schema';
import { tokenDigest, type TokenStore } from './token-store';

const BASIC = /^\s*[Bb]asic\s*(.+)$/;
const INVALID_CLIENT = oauthError('invalid_client', 'Invalid client authentication');
const INVALID_REDIRECT = oauthError('invalid_request', 'Invalid redirect_uri that does not match with any redirect_uri created with the application');

interface ClientCredentials {
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** the credentials came in the Authorization header: a failure is a 401 with a Basic challenge */
  fromHeader: boolean;
}

/** client_id (and client_secret) from the parameters, else from `Authorization: Basic base64(id:secret)`. */
function clientCredentials(ctx: OAuth2Context, params: OAuth2Params, config: OAuth2Config): ClientCredentials {
  const clientId = params.get('client_id');
  if (clientId !== undefined) return { clientId, clientSecret: params.get('client_secret'), fromHeader: false };
  const header = ctx.req.headers[config.auth_header_name.toLowerCase()];
  if (typeof header !== 'string') return { clientId: undefined, clientSecret: undefined, fromHeader: false };
  const m = BASIC.exec(header);
  if (!m) return { clientId: undefined, clientSecret: undefined, fromHeader: true };
  const decoded = Buffer.from(m[1]!.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? { clientId: decoded, clientSecret: undefined, fromHeader: true } : { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1), fromHeader: true };
}

const PUBLIC_WITH_SECRET = oauthError('invalid_request', 'client_secret is disallowed for public clients');

/**
 * Kong's client check: a confidential application must present its secret; a public one (which cannot keep a secret)
 * is known by its client_id alone and must not send a secret.
 */
async function clientProblem(client: OAuth2Client, secret: string | undefined): Promise<OAuthError | null> {
  if (client.client_type === 'public') return secret !== undefined && secret.trim() !== '' ? PUBLIC_WITH_SECRET : null;
  return (await client.secretMatches(secret ?? '')) ? null : INVALID_CLIENT;
}

function grantAllowed(grantType: string | undefined, config: OAuth2Config): boolean {
  return (
    grantType === 'authorization_code' ||
    grantType === 'refresh_token' ||
    (config.enable_client_credentials && grantType === 'client_credentials') ||
    (config.enable_password_grant && grantType === 'password')
  );
}

type Outcome = { ok: Record<string, unknown> } | { error: OAuthError };

async function authorizationCodeGrant(store: TokenStore, ctx: OAuth2Context, config: OAuth2Config, params: OAuth2Params, client: OAuth2Client, state: string | undefined): Promise<Outcome> {
  const invalidCode = { error: oauthError('invalid_request', 'Invalid code') };
  const code = params.get('code');
  const record = code === undefined ? null : await store.findCode(tokenDigest(code));
  const service = serviceBinding(ctx, config);
  if (record === null || (service !== null && service.id !== record.service?.id)) return invalidCode;
  if (record.credential.id !== client.id) return invalidCode;
  const verifier = params.has('code_verifier') ? (params.get('code_verifier') ?? '') : undefined;
  const pkce = pkceVerifierProblem(record, verifier, params.notAString('code_verifier'), client, config);
  if (pkce !== null) return { error: pkce };
  // a code is exchanged once, whichever data plane sees it first
  if (!(await store.consumeCode(record.code_digest))) return invalidCode;
  return { ok: await issueToken(store, ctx, config, { client, authenticatedUserid: record.authenticated_userid, scope: record.scope, state, withRefresh: true }) };
}

async function clientCredentialsGrant(store: TokenStore, ctx: OAuth2Context, config: OAuth2Config, params: OAuth2Params, client: OAuth2Client, state: string | undefined): Promise<Outcome> {
  // the provision key is only asked for when the application claims to act for a user
  const userid = params.get('authenticated_userid');
  if (params.has('authenticated_userid') && params.get('provision_key') !== config.provision_key) {
    return { error: oauthError('invalid_provision_key', 'Invalid provision_key') };
  }
  const scope = retrieveScope(params, config);
  if ('error' in scope) return scope;
  return { ok: await issueToken(store, ctx, config, { client, authenticatedUserid: userid ?? null, scope: scope.scope, state, withRefresh: false }) };
}

async function passwordGrant(store: TokenStore, ctx: OAuth2Context, config: OAuth2Config, params: OAuth2Params, client: OAuth2Client, state: string | undefined): Promise<Outcome> {
  if (params.get('provision_key') !== config.provision_key) return { error: oauthError('invalid_provision_key', 'Invalid provision_key') };
  const userid = params.get('authenticated_userid');
  if (blank(userid)) return { error: oauthError('invalid_authenticated_userid', 'Missing authenticated_userid parameter') };
  const scope = retrieveScope(params, config);
  if ('error' in scope) return scope;
  return { ok: await issueToken(store, ctx, config, { client, authenticatedUserid: userid!, scope: scope.scope, state, withRefresh: true }) };
}

async function refreshTokenGrant(store: TokenStore, ctx: OAuth2Context, config: OAuth2Config, params: OAuth2Params, client: OAuth2Client, state: string | undefined): Promise<Outcome> {
  const invalid = { error: oauthError('invalid_request', 'Invalid refresh_token') };
  const refreshToken = params.get('refresh_token');
  const token = refreshToken === undefined ? null : await store.findByRefreshDigest(tokenDigest(refreshToken));
  const service = serviceBinding(ctx, config);
  if (token === null || (service !== null && service.id !== token.service?.id)) return invalid;
  if (token.credential.id !== client.id) return { error: INVALID_CLIENT };
  // the old token goes first: of two refreshes racing with the same refresh token only one gets a new token
  if (!(await store.revoke(token.id))) return invalid;
  return {
    ok: await issueToken(store, ctx, config, { client, authenticatedUserid: token.authenticated_userid, scope: token.scope, state, withRefresh: true, replacing: { token, refreshToken: refreshToken! } }),
  };
}

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  client_credentials: clientCredentialsGrant,
  password: passwordGrant,
  refresh_token: refreshTokenGrant,
} as const;

/**
 * `POST …/oauth2/token`. The checks run in Kong's order and a later failure replaces an earlier one in the answer
 * (an unknown client outranks an unsupported grant type), as Kong reports them.
 */
export async function serveToken(ctx: OAuth2Context, config: OAuth2Config, store: TokenStore): Promise<PluginResponse> {
  const params = await readParams(ctx.req);
  const state = params.get('state');
  let error: OAuthError | null = null;
  let challenge = false;
  let outcome: Record<string, unknown> | null = null;

  const insecure = httpsProblem(ctx, config);
  if (insecure !== null) {
    error = oauthError('access_denied', insecure);
  } else {
    const grantType = params.get('grant_type');
    if (!grantAllowed(grantType, config)) error = oauthError('unsupported_grant_type', 'Invalid grant_type');

    const credentials = clientCredentials(ctx, params, config);
    const client = credentials.clientId === undefined ? undefined : ctx.index.byClientId.get(credentials.clientId);
    if (client === undefined) {
      error = INVALID_CLIENT;
      challenge = credentials.fromHeader;
    } else {
      if (grantType !== 'client_credentials') {
        const redirectUri = params.get('redirect_uri');
        if (redirectUri !== undefined && !(client.redirect_uris ?? []).includes(redirectUri)) error = INVALID_REDIRECT;
      }
      const problem = await clientProblem(client, credentials.clientSecret);
      if (problem !== null) {
        error = problem;
        challenge = problem === INVALID_CLIENT && credentials.fromHeader;
      }
    }

    if (error === null && client !== undefined) {
      const result = await GRANTS[grantType as keyof typeof GRANTS](store, ctx, config, params, client, state);
      if ('error' in result) error = result.error;
      else outcome = result.ok;
    }
  }

  if (outcome !== null) return endpointResponse(200, outcome);
  const body: Record<string, unknown> = { ...error! };
  if (state !== undefined) body.state = state;
  return challenge ? endpointResponse(401, body, { 'www-authenticate': 'Basic realm="OAuth2.0"' }) : endpointResponse(400, body);
}
