import { compactDecrypt, decodeProtectedHeader, type CompactDecryptResult } from 'jose';
import type { PluginContext, PluginResponse } from '../contract';
import type { JweKeyIndex } from './key-index';
import type { JweDecryptConfig } from './schema';

export const KEY_MANAGEMENT_ALGORITHMS = ['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'];
export const CONTENT_ENCRYPTION_ALGORITHMS = ['A128GCM', 'A192GCM', 'A256GCM', 'A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512'];

const refuse = (status: number, message: string): PluginResponse => ({ status, body: { message } });
export const NO_TOKEN = () => refuse(403, 'could not find token');
export const DECODE_FAILED = () => refuse(400, 'failed to decode token');
export const MISSING_KID = () => refuse(400, 'JWE needs to contain jwk kid and enc fields');
export const DECRYPT_FAILED = () => refuse(403, 'failed to decrypt token');

const BEARER = /^bearer\s+/i;

function headerValue(ctx: PluginContext, name: string): string | undefined {
  const value = ctx.req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the protected header of a compact JWE; null when the token is not five parts or the header is not JSON. */
function protectedHeaderOf(token: string): Record<string, unknown> | null {
  if (token.split('.').length !== 5) return null;
  try {
    return decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/**
 * Finds the key for `kid` in the configured sets, in order (the first hit wins). A configured set that does not exist
 * refuses the request when it is reached, as Kong does. Returns `undefined` when refused or not found.
 */
function findKey(index: JweKeyIndex, sets: string[], kid: string) {
  for (const ref of sets) {
    const setId = index.setIds.get(ref);
    if (setId === undefined) return undefined;
    const byKid = index.keysBySet.get(setId);
    if (byKid?.has(kid)) return byKid.get(kid);
  }
  return undefined;
}

export async function jweDecryptAccess(ctx: PluginContext<JweKeyIndex>, config: JweDecryptConfig): Promise<PluginResponse | void> {
  const raw = headerValue(ctx, config.lookup_header_name);
  if (raw === undefined || raw === '') return config.strict ? NO_TOKEN() : undefined;

  const bearer = BEARER.test(raw);
  const token = bearer ? raw.replace(BEARER, '') : raw;

  const header = protectedHeaderOf(token);
  if (!header) return DECODE_FAILED();
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  if (kid === undefined && header.enc !== undefined) return MISSING_KID();
  if (kid === undefined) return DECRYPT_FAILED();

  const key = findKey(ctx.index, config.key_sets, kid);
  if (!key) return DECRYPT_FAILED();

  let result: CompactDecryptResult;
  try {
    result = await compactDecrypt(token, key, {
      keyManagementAlgorithms: KEY_MANAGEMENT_ALGORITHMS,
      contentEncryptionAlgorithms: CONTENT_ENCRYPTION_ALGORITHMS,
    });
  } catch {
    return DECRYPT_FAILED();
  }
  const plaintext = Buffer.from(result.plaintext).toString('utf8');
  ctx.upstream.setHeader(config.forward_header_name, bearer ? `Bearer ${plaintext}` : plaintext);
}
