import type { AuthResult } from '../contract';
import { removeBodyField } from '../key-auth/body';
import type { OAuth2Context } from './grants';
import { hasBodyParams, isFormBody, readParams } from './params';
import { tokenStoreOf } from './runtime-store';
import type { OAuth2Config } from './schema';
import { tokenDigest, type OAuth2Token } from './token-store';
import { firstHeaderValue } from '../shared/first-header';
import { perConfig } from '../shared/per-config';

const INVALID_DESCRIPTION = 'The access token is invalid or has expired';

interface Refusals {
  missing: AuthResult;
  invalid: AuthResult;
  global: AuthResult;
}

/** The 401s of a config, built once. */
const refusals = perConfig((config: OAuth2Config): Refusals => {
  const bearer = config.realm === null ? 'Bearer' : `Bearer realm="${config.realm}"`;
  const built: Refusals = {
    missing: { ok: false, response: { status: 401, body: { error: 'invalid_request', error_description: 'The access token is missing' }, headers: { 'www-authenticate': bearer } } },
    invalid: {
      ok: false,
      response: {
        status: 401,
        body: { error: 'invalid_token', error_description: INVALID_DESCRIPTION },
        headers: { 'www-authenticate': `${bearer} error="invalid_token" error_description="${INVALID_DESCRIPTION}"` },
      },
    },
    global: {
      ok: false,
      response: {
        status: 401,
        body: { error: 'invalid_token', error_description: "The access token is global, but the current plugin is configured without 'global_credentials'" },
        headers: { 'www-authenticate': `${bearer} error="invalid_token" error_description="${INVALID_DESCRIPTION}"` },
      },
    },
  };
  return built;
});

/**
 * The access token: from the `auth_header_name` header (`Bearer <t>` or `Token <t>`; any other value is taken as it
 * is, and fails the lookup), else from the `access_token` parameter (query, or body for POST, PUT and PATCH).
 * `hide_credentials` removes it from where it was found.
 */
async function accessTokenOf(ctx: OAuth2Context, config: OAuth2Config): Promise<string | undefined> {
  const headerName = config.auth_header_name.toLowerCase();
  // the first of repeated headers, as Kong's get_header reads it
  const value = firstHeaderValue(ctx.req, headerName);
  if (value !== undefined) {
    const parts = value.split(/\s+/).filter((p) => p !== '');
    const scheme = parts[0]?.toLowerCase();
    const bearer = parts.length === 2 && (scheme === 'bearer' || scheme === 'token');
    if (bearer && config.hide_credentials) ctx.upstream.removeHeader(headerName);
    return bearer ? parts[1] : value;
  }
  const withBody = hasBodyParams(ctx.req);
  const token = withBody || ctx.req.query.has('access_token') ? (await readParams(ctx.req)).get('access_token') : undefined;
  if (token !== undefined && config.hide_credentials) {
    ctx.upstream.removeQueryArg('access_token');
    if (withBody && isFormBody(ctx.req)) {
      const rewritten = removeBodyField(await ctx.req.readBody(), 'application/x-www-form-urlencoded', 'access_token');
      if (rewritten) ctx.upstream.setBody(rewritten);
    }
  }
  return token;
}

function expired(token: OAuth2Token, now: number): boolean {
  return token.expires_in > 0 && now >= token.issued_at_ms + token.expires_in * 1000;
}

/**
 * Authenticates a request by its access token, looked up in the token store every data plane shares. A token works on
 * the service it was issued for (any service for a plugin with `global_credentials` and a token issued without one),
 * until it expires, and only while its application still exists. Upstream gets `x-authenticated-scope` and
 * `x-authenticated-userid` from the token; client-sent copies never pass.
 */
export async function oauth2Authenticate(ctx: OAuth2Context, config: OAuth2Config): Promise<AuthResult> {
  ctx.upstream.removeHeader('x-authenticated-scope');
  ctx.upstream.removeHeader('x-authenticated-userid');
  const refused = refusals(config);
  const accessToken = await accessTokenOf(ctx, config);
  if (accessToken === undefined || accessToken === '') return refused.missing;

  const token = await tokenStoreOf(ctx.runtime).findByAccessDigest(tokenDigest(accessToken));
  if (token === null) return refused.invalid;
  if (token.service === null) {
    if (!config.global_credentials) return refused.global;
  } else if (token.service.id !== ctx.service?.id) {
    return refused.invalid;
  }
  if (expired(token, Date.now())) return refused.invalid;
  const client = ctx.index.byId.get(token.credential.id);
  if (client === undefined) return refused.invalid;

  if (token.scope !== null) ctx.upstream.setHeader('x-authenticated-scope', token.scope);
  if (token.authenticated_userid !== null) ctx.upstream.setHeader('x-authenticated-userid', token.authenticated_userid);
  return client.result;
}
