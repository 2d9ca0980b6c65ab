import { createHmac, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import type { AuthResult, PluginContext } from '../contract';
import type { JwtCredential, JwtIndex } from './credential-index';
import { isHmacAlgorithm, JWT_ALGORITHMS } from './entities';
import type { JwtConfig } from './schema';
import { decodeBase64Loose, decodeToken, MULTIPLE_TOKENS, retrieveToken, type DecodedToken } from './token';
import { perConfig } from '../shared/per-config';

const SUPPORTED_ALGORITHMS: ReadonlySet<string> = new Set(JWT_ALGORITHMS);

const HMAC_DIGEST: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };

/**
 * An HS* signature, checked synchronously: the HMAC of `header.payload` compared in constant time with the decoded
 * signature. `decodeToken` has already made sure the token has three parts and a base64 signature.
 */
export function hmacSignatureValid(token: string, algorithm: string, secret: Buffer): boolean {
  const dot = token.lastIndexOf('.');
  const signature = decodeBase64Loose(token.slice(dot + 1));
  if (signature === null) return false;
  const expected = createHmac(HMAC_DIGEST[algorithm]!, secret).update(token.slice(0, dot)).digest();
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

/**
 * An EdDSA signature (Ed25519 or Ed448, RFC 8037) over `header.payload`, checked synchronously; a key of another type
 * never verifies.
 */
export function edwardsSignatureValid(token: string, key: KeyObject): boolean {
  const type = key.asymmetricKeyType;
  if (type !== 'ed25519' && type !== 'ed448') return false;
  const dot = token.lastIndexOf('.');
  const signature = decodeBase64Loose(token.slice(dot + 1));
  if (signature === null) return false;
  try {
    return verify(null, Buffer.from(token.slice(0, dot)), key, signature);
  } catch {
    return false;
  }
}

/** What a config turns into once: lower-cased header names, the challenge headers and the fixed refusals. */
interface PreparedConfig {
  headerNames: string[];
  claimsToVerify: Array<'exp' | 'nbf'>;
  /** `WWW-Authenticate` for a refused token */
  invalidChallenge: Record<string, string>;
  missing: AuthResult;
  refusals: Map<string, AuthResult>;
}

const prepare = perConfig((config: JwtConfig): PreparedConfig => {
  const challenge = config.realm != null ? `Bearer realm="${config.realm}"` : 'Bearer';
  const prepared: PreparedConfig = {
    headerNames: config.header_names.map((h) => h.toLowerCase()),
    claimsToVerify: [...new Set(config.claims_to_verify ?? [])],
    invalidChallenge: { 'www-authenticate': `${challenge} error="invalid_token"` },
    missing: { ok: false, response: { status: 401, body: { message: 'Unauthorized' }, headers: { 'www-authenticate': challenge } } },
    refusals: new Map(),
  };
  return prepared;
});

/** A 401 for a bad token; the fixed messages are built once per config. */
function refuse(prepared: PreparedConfig, message: string): AuthResult {
  let refusal = prepared.refusals.get(message);
  if (refusal === undefined) {
    refusal = { ok: false, response: { status: 401, body: { message }, headers: prepared.invalidChallenge } };
    if (prepared.refusals.size < 64) prepared.refusals.set(message, refusal);
  }
  return refusal;
}

/** Claim failures answer with the errors object itself, e.g. `{"exp":"token expired"}`. */
function refuseClaims(prepared: PreparedConfig, errors: Record<string, string>): AuthResult {
  return { ok: false, response: { status: 401, body: errors, headers: prepared.invalidChallenge } };
}

/** Kong's registered-claim checks; null when every configured claim passes. */
export function claimErrors(claims: Record<string, unknown>, toVerify: readonly string[], nowSeconds: number): Record<string, string> | null {
  let errors: Record<string, string> | null = null;
  for (const name of toVerify) {
    const value = claims[name];
    let error: string | null = null;
    if (typeof value !== 'number') error = 'must be a number';
    else if (name === 'exp' && value <= nowSeconds) error = 'token expired';
    else if (name === 'nbf' && value > nowSeconds) error = 'token not valid yet';
    if (error !== null) (errors ??= {})[name] = error;
  }
  return errors;
}

function afterSignature(prepared: PreparedConfig, config: JwtConfig, decoded: DecodedToken, credential: JwtCredential): AuthResult {
  const now = Math.floor(Date.now() / 1000);
  const errors = claimErrors(decoded.claims, prepared.claimsToVerify, now);
  if (errors !== null) return refuseClaims(prepared, errors);
  if (config.maximum_expiration > 0) {
    const exp = decoded.claims.exp;
    if (typeof exp !== 'number' || exp - now > config.maximum_expiration) return refuseClaims(prepared, { exp: 'exceeds maximum allowed expiration' });
  }
  return credential.result;
}

/**
 * Kong's jwt flow: find exactly one token, decode it, pick the credential named by the key claim (claims first, then
 * the header), insist that the token's `alg` is the credential's algorithm (the token never chooses how it is
 * verified), verify the signature, then the registered claims and the maximum expiration. HS* tokens are verified
 * with node:crypto and answer synchronously, EdDSA (Ed25519 and Ed448) too; the other asymmetric algorithms go
 * through jose.
 */
export function jwtAuthenticate(ctx: PluginContext<JwtIndex>, config: JwtConfig): AuthResult | Promise<AuthResult> {
  const prepared = prepare(config);
  const token = retrieveToken(ctx.req, config.uri_param_names, config.cookie_names, prepared.headerNames);
  if (token === null) return prepared.missing;
  if (token === MULTIPLE_TOKENS) return refuse(prepared, 'Multiple tokens provided');

  const decoded = decodeToken(token, SUPPORTED_ALGORITHMS);
  if (typeof decoded === 'string') return refuse(prepared, `Bad token; ${decoded}`);

  const claimName = config.key_claim_name;
  const fromClaims = decoded.claims[claimName];
  const keyValue = fromClaims === undefined || fromClaims === null || fromClaims === false ? decoded.header[claimName] : fromClaims;
  if (keyValue === undefined || keyValue === null || keyValue === false) return refuse(prepared, `No mandatory '${claimName}' in claims`);
  if (keyValue === '') return refuse(prepared, `Invalid '${claimName}' in claims`);

  const credential = typeof keyValue === 'string' ? ctx.index.byKey.get(keyValue) : undefined;
  if (credential === undefined) return refuse(prepared, `No credentials found for given '${claimName}'`);
  if (decoded.header.alg !== credential.algorithm) return refuse(prepared, 'Invalid algorithm');

  if (isHmacAlgorithm(credential.algorithm)) {
    const secret = credential.hmacSecret(config.secret_is_base64);
    if (secret === null) return refuse(prepared, 'Invalid key/secret');
    if (!hmacSignatureValid(token, credential.algorithm, secret)) return refuse(prepared, 'Invalid signature');
    return afterSignature(prepared, config, decoded, credential);
  }

  if (credential.algorithm === 'EdDSA') {
    const edwards = credential.edwardsKey();
    if (edwards === null) return refuse(prepared, 'Invalid key/secret');
    if (!edwardsSignatureValid(token, edwards)) return refuse(prepared, 'Invalid signature');
    return afterSignature(prepared, config, decoded, credential);
  }

  const key = credential.keyFor(config.secret_is_base64);
  if (key === null) return refuse(prepared, 'Invalid key/secret');
  return key.then(async (cryptoKey) => {
    if (cryptoKey === null) return refuse(prepared, 'Invalid key/secret');
    try {
      await compactVerify(token, cryptoKey, { algorithms: [credential.algorithm] });
    } catch {
      return refuse(prepared, 'Invalid signature');
    }
    return afterSignature(prepared, config, decoded, credential);
  });
}
