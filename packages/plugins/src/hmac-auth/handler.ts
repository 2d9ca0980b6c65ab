import type { AuthResult, PluginContext, PluginRequest } from '../contract';
import type { HmacAuthIndex } from './credential-index';
import type { HmacAlgorithm, HmacAuthConfig } from './schema';
import { bodyMatchesDigest, dateWithinSkew, headerValue, parseHmacHeader, signatureMatches, signingString, type HmacParams } from './signature';
import { perConfig } from '../shared/per-config';

/** What a config turns into once: the refusals (all 401, with the challenge) and the allowed algorithms. */
interface PreparedConfig {
  algorithms: ReadonlySet<string>;
  missing: AuthResult;
  badDate: AuthResult;
  cannotVerify: AuthResult;
  mismatch: AuthResult;
}

const prepare = perConfig((config: HmacAuthConfig): PreparedConfig => {
  const headers = { 'www-authenticate': config.realm != null ? `hmac realm="${config.realm}"` : 'hmac' };
  const refusal = (message: string): AuthResult => ({ ok: false, response: { status: 401, body: { message }, headers } });
  const prepared: PreparedConfig = {
    algorithms: new Set(config.algorithms),
    missing: refusal('Unauthorized'),
    badDate: refusal('HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication'),
    cannotVerify: refusal('HMAC signature cannot be verified'),
    mismatch: refusal('HMAC signature does not match'),
  };
  return prepared;
});

/** Every enforced header must be among the signed ones, and the algorithm must be allowed. */
function paramsAcceptable(params: HmacParams, config: HmacAuthConfig, prepared: PreparedConfig): boolean {
  for (const required of config.enforce_headers) if (!params.headers.includes(required)) return false;
  return prepared.algorithms.has(params.algorithm);
}

function rawQueryOf(req: PluginRequest): string {
  return req.rawQuery ?? req.query.toString();
}

/**
 * Kong's order of checks: an Authorization or Proxy-Authorization header at all; a fresh Date or X-Date; the hmac
 * parameters (Proxy-Authorization first) with the enforced headers and an allowed algorithm; a known username; the
 * signature over the listed headers; then, with validate_request_body, the body against its Digest. Only that last
 * step reads the body, so only it makes the outcome asynchronous.
 */
export function hmacAuthAuthenticate(ctx: PluginContext<HmacAuthIndex>, config: HmacAuthConfig): AuthResult | Promise<AuthResult> {
  const prepared = prepare(config);
  const { req } = ctx;
  const proxyAuthorization = headerValue(req, 'proxy-authorization');
  const authorization = headerValue(req, 'authorization');
  if (proxyAuthorization === undefined && authorization === undefined) return prepared.missing;

  if (!dateWithinSkew(req, config.clock_skew, Math.floor(Date.now() / 1000))) return prepared.badDate;

  let params = parseHmacHeader(proxyAuthorization);
  let usedHeader = 'proxy-authorization';
  if (params === null) {
    params = parseHmacHeader(authorization);
    usedHeader = 'authorization';
  }
  if (config.hide_credentials) ctx.upstream.removeHeader(usedHeader);
  if (params === null || !paramsAcceptable(params, config, prepared)) return prepared.cannotVerify;

  const credential = ctx.index.byUsername.get(params.username);
  if (credential === undefined) return prepared.cannotVerify;

  const signed = signingString(req, params.headers, rawQueryOf(req));
  if (!signatureMatches(params.algorithm as HmacAlgorithm, credential.secret, signed, params.signature)) return prepared.mismatch;

  if (!config.validate_request_body) return credential.result;
  return req.readBody().then((body) => (bodyMatchesDigest(body, headerValue(req, 'digest')) ? credential.result : prepared.mismatch));
}
