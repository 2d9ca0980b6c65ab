import { randomCredentialString } from '../key-auth/entities';
import type { PluginResponse } from '../contract';
import { blank, endpointResponse, httpsProblem, issueToken, oauthError, retrieveScope, serviceBinding, type OAuth2Context, type OAuthError } from './grants';
import { readParams } from './params';
import { readChallenge } from './pkce';
import type { OAuth2Config } from './schema';
import { tokenDigest, type TokenStore } from './token-store';

/** How long an authorization code can be exchanged (Kong's 5 minutes). */
export const AUTHORIZATION_CODE_TTL = 300;

const INVALID_REDIRECT = oauthError('invalid_request', 'Invalid redirect_uri that does not match with any redirect_uri created with the application');

function decodeArgs(encoded: string): Map<string, string> {
  const out = new Map<string, string>();
  if (encoded === '') return out;
  for (const [name, value] of new URLSearchParams(encoded)) out.set(name, value);
  return out;
}

function encodeArgs(args: Map<string, string>): string {
  return [...args.keys()]
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(args.get(name)!)}`)
    .join('&');
}

/**
 * The redirect URI with `params` added to its query string, or for an implicit grant's token to its fragment; arguments
 * already there are kept, ours win, names sorted (Kong's encoding). The URI is otherwise left exactly as registered.
 */
export function redirectWith(uri: string, params: Record<string, unknown>, inFragment: boolean): string {
  const hashAt = uri.indexOf('#');
  const beforeHash = hashAt < 0 ? uri : uri.slice(0, hashAt);
  let fragment = hashAt < 0 ? '' : uri.slice(hashAt + 1);
  const queryAt = beforeHash.indexOf('?');
  const path = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
  let query = queryAt < 0 ? '' : beforeHash.slice(queryAt + 1);
  const args = decodeArgs(inFragment ? fragment : query);
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null) args.set(name, String(value));
  if (inFragment) fragment = encodeArgs(args);
  else query = encodeArgs(args);
  return `${path}${query === '' ? '' : `?${query}`}${fragment === '' ? '' : `#${fragment}`}`;
}

/**
 * `POST …/oauth2/authorize`: the application's backend, having logged the user in, asks for a code (response_type
 * `code`) or, with the implicit grant, a token (`token`). Errors found before the application is known are answered
 * as they are; afterwards they travel in the redirect URI, as successes do.
 */
export async function serveAuthorize(ctx: OAuth2Context, config: OAuth2Config, store: TokenStore): Promise<PluginResponse> {
  const params = await readParams(ctx.req);
  const state = params.get('state');
  let error: OAuthError | null = null;
  let success: Record<string, unknown> | null = null;
  let redirectUri: string | undefined;
  let implicit = false;

  const insecure = httpsProblem(ctx, config);
  if (insecure !== null) {
    error = oauthError('access_denied', insecure);
  } else if (params.get('provision_key') !== config.provision_key) {
    error = oauthError('invalid_provision_key', 'Invalid provision_key');
  } else if (blank(params.get('authenticated_userid'))) {
    error = oauthError('invalid_authenticated_userid', 'Missing authenticated_userid parameter');
  } else {
    const responseType = params.get('response_type');
    if (!((responseType === 'code' && config.enable_authorization_code) || (responseType === 'token' && config.enable_implicit_grant))) {
      error = oauthError('unsupported_response_type', 'Invalid response_type');
    }
    const scope = retrieveScope(params, config);
    if ('error' in scope) error = scope.error;

    const clientId = params.get('client_id');
    const client = clientId === undefined ? undefined : ctx.index.byClientId.get(clientId);
    if (client === undefined) {
      error = oauthError('invalid_client', 'Invalid client authentication');
    } else {
      const registered = client.redirect_uris ?? [];
      redirectUri = params.get('redirect_uri') ?? registered[0];
      if (redirectUri !== undefined && !registered.includes(redirectUri)) {
        error = INVALID_REDIRECT;
        redirectUri = registered[0];
      }
      // Kong reads the PKCE challenge for both response types, and its refusal replaces an earlier one
      const challenge = readChallenge(params, client, config);
      if ('error' in challenge) error = challenge.error;
      if (error === null && !('error' in scope) && !('error' in challenge)) {
        const userid = params.get('authenticated_userid')!;
        if (responseType === 'code') {
          const code = randomCredentialString();
          await store.saveCode(
            {
              code_digest: tokenDigest(code),
              created_at: Math.floor(Date.now() / 1000),
              credential: { id: client.id },
              service: serviceBinding(ctx, config),
              authenticated_userid: userid,
              scope: scope.scope,
              ...challenge,
            },
            AUTHORIZATION_CODE_TTL,
          );
          success = { code };
        } else {
          success = await issueToken(store, ctx, config, { client, authenticatedUserid: userid, scope: scope.scope, state, withRefresh: false });
          implicit = true;
        }
      }
    }
  }

  const answer: Record<string, unknown> = { ...(success ?? error!) };
  if (state !== undefined) answer.state = state;
  const status = success !== null ? 200 : 400;
  if (redirectUri === undefined) return endpointResponse(status, answer);
  return endpointResponse(status, { redirect_uri: redirectWith(redirectUri, answer, implicit) });
}
