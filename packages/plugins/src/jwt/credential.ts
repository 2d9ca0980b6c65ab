import { createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import { importJWK, type CryptoKey } from 'jose';
import type { AuthResult } from '../contract';
import { isHmacAlgorithm, type JwtAlgorithm } from './entities';
import { decodeBase64Loose } from './token';

/** What verifies a token: a WebCrypto key, or null when the credential's secret or public key is unusable. */
type VerificationKey = CryptoKey | null;

const HMAC_HASH: Record<string, string> = { HS256: 'SHA-256', HS384: 'SHA-384', HS512: 'SHA-512' };

export class JwtCredential {
  /** the success outcome, built once per snapshot */
  readonly result: AuthResult & { ok: true };
  private readonly secret: Buffer | null;
  private readonly publicKey: KeyObject | null;
  private rawKey: Promise<VerificationKey> | null = null;
  private base64Key: Promise<VerificationKey> | null = null;
  /** the base64-decoded HS* secret once computed; null when it does not decode */
  private decodedSecret: Buffer | null | undefined = undefined;

  constructor(
    readonly algorithm: JwtAlgorithm,
    secret: string | null,
    rsaPublicKey: string | null,
    result: AuthResult & { ok: true },
  ) {
    this.result = result;
    this.secret = isHmacAlgorithm(algorithm) && secret !== null ? Buffer.from(secret, 'utf8') : null;
    this.publicKey = isHmacAlgorithm(algorithm) ? null : parsePublicKey(rsaPublicKey);
  }

  /**
   * HS* credentials: the secret to compute the HMAC with, synchronously (decoded once with `secretIsBase64`), or null
   * when it is missing, empty or not base64 (Kong's "Invalid key/secret"). Other algorithms: null.
   */
  hmacSecret(secretIsBase64: boolean): Buffer | null {
    const secret = this.secret;
    if (secret === null) return null;
    if (!secretIsBase64) return secret.length > 0 ? secret : null;
    if (this.decodedSecret === undefined) {
      const decoded = decodeBase64Loose(secret.toString('utf8'));
      this.decodedSecret = decoded !== null && decoded.length > 0 ? decoded : null;
    }
    return this.decodedSecret;
  }

  /**
   * The WebCrypto key for jose's verification, or null (Kong's "Invalid key/secret"); the handler uses it for the
   * asymmetric algorithms and `hmacSecret` for HS*. The PEM is parsed once per snapshot when the
   * index is built; the WebCrypto handle is created on first use and shared by every later request of the snapshot.
   * `secretIsBase64` (config.secret_is_base64) decodes the HS* secret first.
   */
  /**
   * EdDSA credentials: the public key, which node:crypto verifies synchronously (WebCrypto, and so jose, has no
   * Ed448); null when it does not parse (Kong's "Invalid key/secret") or for another algorithm.
   */
  edwardsKey(): KeyObject | null {
    return this.algorithm === 'EdDSA' ? this.publicKey : null;
  }

  keyFor(secretIsBase64: boolean): Promise<VerificationKey> | null {
    if (!isHmacAlgorithm(this.algorithm)) {
      if (this.publicKey === null) return null;
      return (this.rawKey ??= importPublicKey(this.publicKey, this.algorithm));
    }
    if (this.secret === null) return null;
    if (!secretIsBase64) return (this.rawKey ??= importHmacKey(this.secret, this.algorithm));
    if (this.base64Key === null) {
      const decoded = decodeBase64Loose(this.secret.toString('utf8'));
      this.base64Key = decoded === null ? Promise.resolve(null) : importHmacKey(decoded, this.algorithm);
    }
    return this.base64Key;
  }
}

function parsePublicKey(pem: string | null): KeyObject | null {
  if (pem === null || pem === '') return null;
  try {
    return createPublicKey(pem);
  } catch {
    return null;
  }
}

function importHmacKey(secret: Uint8Array, algorithm: string): Promise<VerificationKey> {
  return webcrypto.subtle
    .importKey('raw', secret, { name: 'HMAC', hash: HMAC_HASH[algorithm]! }, false, ['verify'])
    // node's webcrypto key and the DOM CryptoKey jose is typed with are the same object under two declarations
    .then((key) => key as unknown as CryptoKey)
    .catch(() => null);
}

function importPublicKey(key: KeyObject, algorithm: string): Promise<VerificationKey> {
  return Promise.resolve()
    .then(() => importJWK(key.export({ format: 'jwk' }), algorithm))
    .then((imported) => (imported instanceof Uint8Array ? null : imported))
    .catch(() => null);
}
