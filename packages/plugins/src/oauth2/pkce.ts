import { createHash, timingSafeEqual } from 'node:crypto';
import type { OAuth2Client } from './credential-index';
import { blank, oauthError, type OAuthError } from './grants';
import type { OAuth2Params } from './params';
import type { OAuth2Config } from './schema';
import type { AuthorizationCode } from './token-store';

/**
 * PKCE (RFC 7636) by `config.pkce`: `strict` demands a code_challenge from every application, `lax` from public ones
 * and checks it whenever one was given, `none` ignores PKCE. The method defaults to S256 (Kong accepts only S256, so
 * its clients may leave it out); `plain` is accepted too.
 */

export type Challenge = Pick<AuthorizationCode, 'challenge' | 'challenge_method'>;

const NO_CHALLENGE: Challenge = { challenge: null, challenge_method: null };

/** The challenge an authorization request carries, or why the request is refused. */
export function readChallenge(params: OAuth2Params, client: OAuth2Client, config: OAuth2Config): Challenge | { error: OAuthError } {
  if (config.pkce === 'none') return NO_CHALLENGE;
  const challenge = params.get('code_challenge');
  if (!blank(challenge)) {
    const method = params.get('code_challenge_method') ?? 'S256';
    if (method !== 'S256' && method !== 'plain') return { error: oauthError('invalid_request', 'code_challenge_method is not supported, must be S256 or plain') };
    return { challenge: challenge!, challenge_method: method };
  }
  if (config.pkce === 'strict') return { error: oauthError('invalid_request', 'code_challenge is required for all clients') };
  if (client.client_type === 'public') return { error: oauthError('invalid_request', 'code_challenge is required for public clients') };
  return NO_CHALLENGE;
}

function transformed(verifier: string, method: Challenge['challenge_method']): string {
  return method === 'plain' ? verifier : createHash('sha256').update(verifier, 'utf8').digest('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** null when the token request's code_verifier answers the code's challenge (or PKCE does not apply). */
export function pkceVerifierProblem(code: Challenge, verifier: string | undefined, client: OAuth2Client, config: OAuth2Config): OAuthError | null {
  if (config.pkce === 'none') return null;
  if (code.challenge === null) {
    // issued before PKCE was demanded of this application: it cannot prove it asked for the code
    return config.pkce === 'strict' || client.client_type === 'public' ? oauthError('invalid_request', 'Invalid code') : null;
  }
  if (blank(verifier)) return oauthError('invalid_request', 'code_verifier is required for PKCE authorization requests');
  return same(transformed(verifier!, code.challenge_method), code.challenge) ? null : oauthError('invalid_grant', 'code_verifier does not match code_challenge');
}
