import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encrypts private key material at rest (AES-256-GCM). Stored form: `enc:v1:<base64(iv | tag | ciphertext)>`.
 * Values without the prefix are returned unchanged by `decrypt`, so public material can stay readable.
 */
export interface Keyring {
  encrypt(plain: string): string;
  decrypt(stored: string): string;
}

export const ENCRYPTED_PREFIX = 'enc:v1:';
export const KEYRING_FILE = 'keyring.key';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Binds ciphertexts to their purpose, so a value encrypted elsewhere with the same key does not decrypt here.
const AAD = Buffer.from('gatehouse:keys:v1');
// A fixed salt is enough: the secret is per deployment, and the derivation only has to stretch a passphrase.
const KDF_SALT = Buffer.from('gatehouse-keyring-v1');

export function isEncrypted(value: string): boolean {
  return value.startsWith(ENCRYPTED_PREFIX);
}

/** A keyring over a raw 32-byte AES key. */
export function keyringFromKey(key: Buffer): Keyring {
  if (key.length !== 32) throw new Error(`keyring key must be 32 bytes, got ${key.length}`);
  return {
    encrypt(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(AAD);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ENCRYPTED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    decrypt(stored) {
      if (!isEncrypted(stored)) return stored;
      const raw = Buffer.from(stored.slice(ENCRYPTED_PREFIX.length), 'base64');
      if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('keyring: stored value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('keyring: cannot decrypt stored key material (wrong GATEHOUSE_KEYRING_SECRET or keyring file?)');
      }
    },
  };
}

const derived = new Map<string, Buffer>();

/** A keyring whose key is stretched from a passphrase (GATEHOUSE_KEYRING_SECRET) with scrypt. */
export function keyringFromSecret(secret: string): Keyring {
  if (secret.length === 0) throw new Error('GATEHOUSE_KEYRING_SECRET must not be empty');
  let key = derived.get(secret);
  if (!key) {
    key = scryptSync(secret, KDF_SALT, 32, { N: 2 ** 14, r: 8, p: 1 });
    derived.set(secret, key);
  }
  return keyringFromKey(key);
}

/**
 * Embedded mode: a random 32-byte key kept in `<dataDir>/keyring.key` (mode 0600), created on first use.
 * Losing the file makes stored private keys unreadable, like losing the secret.
 */
export function keyringFromDataDir(dataDir: string): Keyring {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, KEYRING_FILE);
  if (!existsSync(file)) {
    // Written aside and linked into place: link fails when the file exists, so two processes starting together
    // agree on the first key, and nobody ever reads a half-written file.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`keyring file ${file} does not hold a base64 32-byte key`);
  return keyringFromKey(key);
}

/** The keyring for a deployment: the secret when set, otherwise the key file in the data directory. */
export function openKeyring(opts: { secret?: string | null; dataDir?: string | null }): Keyring {
  if (opts.secret) return keyringFromSecret(opts.secret);
  if (opts.dataDir) return keyringFromDataDir(opts.dataDir);
  throw new Error('a keyring needs GATEHOUSE_KEYRING_SECRET or a data directory');
}
