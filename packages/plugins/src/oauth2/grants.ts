import { randomUUID } from 'node:crypto';
import type { PluginContext, PluginResponse } from '../contract';
import { randomCredentialString } from '../key-auth/entities';
import type { OAuth2Client, OAuth2Index } from './credential-index';
import type { OAuth2Params } from './params';
import type { OAuth2Config } from './schema';
import { tokenDigest, type OAuth2Token, type TokenStore } from './token-store';

/** Pieces the token and authorize endpoints share: Kong's error shape, scopes, the HTTPS rule, issuing a token. */

export type OAuth2Context = PluginContext<OAuth2Index>;

export interface OAuthError {
  error: string;
  error_description: string;
}

export const oauthError = (error: string, error_description: string): OAuthError => ({ error, error_description });

/** Every endpoint answer carries these (RFC 6749 5.1). */
export const NO_STORE = Object.freeze({ 'cache-control': 'no-store', pragma: 'no-cache' });

export function endpointResponse(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): PluginResponse {
  return { status, body, headers: { ...NO_STORE, ...headers } };
}

/** How many X-Forwarded-Proto headers arrived (Node joins repeated ones, the raw list tells). */
function forwardedProtoCount(ctx: OAuth2Context): number {
  const raw = ctx.req.rawHeaders;
  if (!raw) return ctx.req.headers['x-forwarded-proto'] === undefined ? 0 : 1;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'x-forwarded-proto') count++;
  return count;
}

/**
 * null when the request may use the endpoints: it came over HTTPS, or `accept_http_if_already_terminated` is on and a
 * trusted proxy says (in one X-Forwarded-Proto header) that it terminated HTTPS. Otherwise the error description.
 */
export function httpsProblem(ctx: OAuth2Context, config: OAuth2Config): string | null {
  if (ctx.req.scheme === 'https') return null;
  const refused = 'You must use HTTPS';
  if (!config.accept_http_if_already_terminated || ctx.req.fromTrustedProxy !== true) return refused;
  if (forwardedProtoCount(ctx) > 1) return 'Only one X-Forwarded-Proto header allowed';
  const proto = ctx.req.headers['x-forwarded-proto'];
  return typeof proto === 'string' && proto.trim().toLowerCase() === 'https' ? null : refused;
}

/** The granted scope (space separated, null for none) or Kong's invalid_scope error. */
export function retrieveScope(params: OAuth2Params, config: OAuth2Config): { scope: string | null } | { error: OAuthError } {
  if (config.scopes !== null && params.has('scope')) {
    const scope = params.get('scope');
    if (scope === undefined) return { error: oauthError('invalid_scope', 'scope must be a string') };
    const granted: string[] = [];
    for (const wanted of scope.split(/\s+/).filter((s) => s !== '')) {
      if (!config.scopes.includes(wanted)) return { error: oauthError('invalid_scope', `"${wanted}" is an invalid scope`) };
      granted.push(wanted);
    }
    return { scope: granted.length > 0 ? granted.join(' ') : null };
  }
  if (!params.has('scope') && config.mandatory_scope) return { error: oauthError('invalid_scope', 'You must specify a scope') };
  return { scope: null };
}

/** The service tokens and codes are bound to; null with `global_credentials` (they work on every service). */
export function serviceBinding(ctx: OAuth2Context, config: OAuth2Config): { id: string } | null {
  if (config.global_credentials || ctx.service === null) return null;
  return { id: ctx.service.id };
}

export function blank(value: string | undefined): boolean {
  return value === undefined || value.trim() === '';
}

export interface TokenRequest {
  client: OAuth2Client;
  authenticatedUserid: string | null;
  scope: string | null;
  state: string | undefined;
  /** client credentials and implicit grants get no refresh token */
  withRefresh: boolean;
  /** the token a refresh replaces, and the refresh token presented: with `reuse_refresh_token` it (and its expiry) carry over */
  replacing?: { token: OAuth2Token; refreshToken: string };
}

/**
 * Stores a new access token (its digest) and returns the token response body, the only place the token is in clear.
 * The access token is valid `token_expiration` seconds, its refresh token `refresh_token_ttl` seconds (0: until
 * revoked); the record goes when neither is valid.
 */
export async function issueToken(store: TokenStore, ctx: OAuth2Context, config: OAuth2Config, request: TokenRequest): Promise<Record<string, unknown>> {
  const expiresIn = config.token_expiration;
  const now = Date.now();
  const replacing = request.replacing;
  const reuse = config.reuse_refresh_token && replacing !== undefined && replacing.token.refresh_token_digest !== null;
  let refreshToken: string | null = null;
  if (request.withRefresh && expiresIn > 0) refreshToken = reuse ? replacing!.refreshToken : randomCredentialString();
  let refreshExpiresAt: number | null = refreshToken !== null && config.refresh_token_ttl > 0 ? now + config.refresh_token_ttl * 1000 : null;
  if (reuse && refreshToken !== null) refreshExpiresAt = replacing!.token.refresh_expires_at_ms;
  const accessExpiresAt = expiresIn > 0 ? now + expiresIn * 1000 : null;
  // a token that never expires, or a refresh token kept until revoked, keeps the record until revoked
  const removedAt = refreshToken === null ? accessExpiresAt : accessExpiresAt === null || refreshExpiresAt === null ? null : Math.max(accessExpiresAt, refreshExpiresAt);
  const accessToken = randomCredentialString();
  const token: OAuth2Token = {
    id: randomUUID(),
    created_at: Math.floor(now / 1000),
    credential: { id: request.client.id },
    service: serviceBinding(ctx, config),
    token_type: 'bearer',
    expires_in: expiresIn,
    access_token_digest: tokenDigest(accessToken),
    refresh_token_digest: refreshToken === null ? null : tokenDigest(refreshToken),
    authenticated_userid: request.authenticatedUserid,
    scope: request.scope,
    issued_at_ms: now,
    refresh_expires_at_ms: refreshExpiresAt,
    removed_at_ms: removedAt,
  };
  await store.saveToken(token);
  const body: Record<string, unknown> = { token_type: 'bearer', access_token: accessToken };
  if (expiresIn > 0) body.expires_in = expiresIn;
  if (refreshToken !== null) body.refresh_token = refreshToken;
  if (request.state !== undefined) body.state = request.state;
  return body;
}
