import { createHash, timingSafeEqual } from 'node:crypto';
import type { OAuth2Client } from './credential-index';
import { oauthError, type OAuthError } from './grants';
import type { OAuth2Params } from './params';
import type { OAuth2Config } from './schema';
import type { AuthorizationCode } from './token-store';

/**
 * PKCE (RFC 7636) as Kong does it: S256 only (`s256` is read as S256, and the method defaults to it); a challenge
 * given is kept whatever `config.pkce` says, and a code issued with one always needs its verifier. `config.pkce`
 * decides who must send a challenge: public applications unless `none`, confidential ones with `strict`.
 */

export type Challenge = Pick<AuthorizationCode, 'challenge' | 'challenge_method'>;

const NO_CHALLENGE: Challenge = { challenge: null, challenge_method: null };
const BASE64_ANY = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A challenge that is base64 (either alphabet, padded or not) is kept in unpadded base64url, as Kong re-encodes it. */
export function normalisedChallenge(challenge: string): string {
  const unpadded = challenge.replace(/=+$/, '');
  if (!BASE64_ANY.test(challenge) || unpadded.length % 4 === 1) return challenge;
  return Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('base64url');
}

/** Whether this application must use PKCE under this config (Kong's requires_pkce without a code). */
function pkceRequired(client: OAuth2Client, config: OAuth2Config): boolean {
  return client.client_type === 'public' ? config.pkce !== 'none' : config.pkce === 'strict';
}

/** The challenge an authorization request carries, or why the request is refused. */
export function readChallenge(params: OAuth2Params, client: OAuth2Client, config: OAuth2Config): Challenge | { error: OAuthError } {
  const challenge = params.get('code_challenge');
  const method = params.get('code_challenge_method');
  if (method !== undefined && challenge === undefined) return { error: oauthError('invalid_request', 'code_challenge is required when code_method is present') };
  if (challenge === undefined) {
    return pkceRequired(client, config) ? { error: oauthError('invalid_request', `code_challenge is required for ${client.client_type} clients`) } : NO_CHALLENGE;
  }
  if (method !== undefined && method !== 'S256' && method !== 's256') return { error: oauthError('invalid_request', 'code_challenge_method is not supported, must be S256') };
  return { challenge: normalisedChallenge(challenge), challenge_method: 'S256' };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * null when the token request's code_verifier answers the code's challenge, or when PKCE does not apply: the code was
 * issued without a challenge and this application need not use PKCE. `several` says the parameter came more than once.
 */
export function pkceVerifierProblem(code: Challenge, verifier: string | undefined, several: boolean, client: OAuth2Client, config: OAuth2Config): OAuthError | null {
  if (code.challenge_method === null && !pkceRequired(client, config)) return null;
  if (verifier === undefined) return oauthError('invalid_request', 'code_verifier is required for PKCE authorization requests');
  if (several) return oauthError('invalid_request', 'code_verifier is not a string');
  if (verifier.length < 43 || verifier.length > 128) return oauthError('invalid_request', 'code_verifier must be between 43 and 128 characters');
  const transformed = createHash('sha256').update(verifier, 'utf8').digest('base64url');
  return code.challenge !== null && same(transformed, code.challenge) ? null : oauthError('invalid_grant', 'Invalid code');
}
