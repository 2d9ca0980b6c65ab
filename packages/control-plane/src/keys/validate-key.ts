import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { checkKeyFormat, schemaViolation, type FieldErrors } from '@gatehouse/core';

/*
 * Key material is loaded with Node's OpenSSL bindings, as Kong loads it with OpenSSL: that accepts every PEM form Kong
 * accepts (PKCS#8, PKCS#1 "RSA PRIVATE KEY", SEC1 "EC PRIVATE KEY", SPKI), where jose's PEM importers take only
 * PKCS#8/SPKI. The data plane hands the same KeyObjects to jose.
 */

export const KEY_MESSAGES = {
  jwkNotJson: 'could not json decode jwk string',
  jwkKidMismatch: 'kid in jwk.kid must be equal to keys.kid',
  jwkNotKey: 'could not load JWK, likely not a valid key',
  pemEmpty: 'need to supply a PEM formatted public and/or private key.',
  pemPublic: 'could not load public key',
  pemPrivate: 'could not load private key',
  pemMismatch: 'public key does not match private key',
} as const;

/** Whether a parsed JWK carries private members (then it is secret and stored encrypted). */
export function jwkHasPrivatePart(jwk: Record<string, unknown>): boolean {
  return jwk.d !== undefined || jwk.k !== undefined;
}

/** Loads a JWK object as a Node key: the private key when it has private members, else the public key. */
export function loadJwk(jwk: Record<string, unknown>): KeyObject {
  // Only asymmetric keys belong here: an `oct` JWK is refused by both loaders.
  return jwkHasPrivatePart(jwk) ? createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }) : createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
}

function publicDer(key: KeyObject): Buffer {
  return key.export({ type: 'spki', format: 'der' });
}

function checkJwk(jwkText: string, kid: unknown): FieldErrors | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(jwkText);
  } catch {
    return { '@entity': [KEY_MESSAGES.jwkNotJson] };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { '@entity': [KEY_MESSAGES.jwkNotKey] };
  const jwk = parsed as Record<string, unknown>;
  if (jwk.kid !== kid) return { '@entity': [KEY_MESSAGES.jwkKidMismatch] };
  try {
    loadJwk(jwk);
  } catch {
    return { '@entity': [KEY_MESSAGES.jwkNotKey] };
  }
  return null;
}

function checkPem(pem: { private_key?: string | null; public_key?: string | null }): FieldErrors | null {
  const privateText = pem.private_key ?? null;
  const publicText = pem.public_key ?? null;
  if (privateText == null && publicText == null) return { '@entity': [KEY_MESSAGES.pemEmpty] };
  const errors: Record<string, string> = {};
  let privateKey: KeyObject | null = null;
  let publicKey: KeyObject | null = null;
  if (publicText != null) {
    try {
      // createPublicKey would also derive a public key from a private PEM; a public_key field must hold a public key.
      if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(publicText)) throw new Error('private material');
      publicKey = createPublicKey(publicText);
    } catch {
      errors.public_key = KEY_MESSAGES.pemPublic;
    }
  }
  if (privateText != null) {
    try {
      privateKey = createPrivateKey(privateText);
    } catch {
      errors.private_key = KEY_MESSAGES.pemPrivate;
    }
  }
  if (Object.keys(errors).length > 0) return { pem: errors };
  if (privateKey && publicKey && !publicDer(createPublicKey(privateKey)).equals(publicDer(publicKey))) {
    return { '@entity': [KEY_MESSAGES.pemMismatch] };
  }
  return null;
}

/**
 * Kong's checks on a key after field validation: exactly one of jwk/pem, the JWK decodes, names the same kid and loads
 * as a key; PEM halves load and form a pair. Returns field errors (Kong's shape) or null.
 */
export function checkKeyMaterial(entity: Record<string, unknown>): FieldErrors | null {
  const format = checkKeyFormat(entity);
  if (format) return format;
  if (entity.jwk != null) {
    if (typeof entity.jwk !== 'string') return { jwk: 'expected a string' };
    return checkJwk(entity.jwk, entity.kid);
  }
  return checkPem(entity.pem as { private_key?: string | null; public_key?: string | null });
}

/** Throws Kong's schema violation (code 2, 400) when the key's material is not acceptable. */
export function validateKey(entity: Record<string, unknown>): void {
  const errors = checkKeyMaterial(entity);
  if (errors) throw schemaViolation(errors);
}
