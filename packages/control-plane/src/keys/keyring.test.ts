import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ENCRYPTED_PREFIX, KEYRING_FILE, isEncrypted, keyringFromDataDir, keyringFromKey, keyringFromSecret, openKeyring } from './keyring';
import { openKeyMaterial, sealKeyMaterial } from './seal';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'gatehouse-keyring-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('keyring', () => {
  it('round-trips and never repeats a ciphertext', () => {
    const ring = keyringFromSecret('correct horse battery staple');
    const a = ring.encrypt('-----BEGIN PRIVATE KEY-----\nsecret\n');
    const b = ring.encrypt('-----BEGIN PRIVATE KEY-----\nsecret\n');
    expect(a.startsWith(ENCRYPTED_PREFIX)).toBe(true);
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(ring.decrypt(a)).toBe('-----BEGIN PRIVATE KEY-----\nsecret\n');
    expect(isEncrypted(a)).toBe(true);
  });

  it('passes unencrypted values through decrypt', () => {
    expect(keyringFromSecret('s').decrypt('{"kty":"RSA"}')).toBe('{"kty":"RSA"}');
  });

  it('the same secret opens values across instances; another secret cannot', () => {
    const sealed = keyringFromSecret('one').encrypt('x');
    expect(keyringFromSecret('one').decrypt(sealed)).toBe('x');
    expect(() => keyringFromSecret('two').decrypt(sealed)).toThrow(/cannot decrypt/);
  });

  it('detects tampering', () => {
    const ring = keyringFromKey(Buffer.alloc(32, 1));
    const sealed = ring.encrypt('hello');
    const raw = Buffer.from(sealed.slice(ENCRYPTED_PREFIX.length), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => ring.decrypt(ENCRYPTED_PREFIX + raw.toString('base64'))).toThrow(/cannot decrypt/);
    expect(() => ring.decrypt(ENCRYPTED_PREFIX + 'AAAA')).toThrow(/truncated/);
  });

  it('rejects a key that is not 32 bytes and an empty secret', () => {
    expect(() => keyringFromKey(Buffer.alloc(16))).toThrow(/32 bytes/);
    expect(() => keyringFromSecret('')).toThrow();
  });

  it('embedded mode creates a 0600 key file once and reuses it', () => {
    const dir = join(tempDir(), 'nested');
    const first = keyringFromDataDir(dir);
    const file = join(dir, KEYRING_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const contents = readFileSync(file, 'utf8');
    const sealed = first.encrypt('pem');
    expect(keyringFromDataDir(dir).decrypt(sealed)).toBe('pem');
    expect(readFileSync(file, 'utf8')).toBe(contents);
  });

  it('embedded mode refuses a damaged key file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, KEYRING_FILE), 'short');
    expect(() => keyringFromDataDir(dir)).toThrow(/32-byte/);
  });

  it('openKeyring prefers the secret over the data directory', () => {
    const dir = tempDir();
    const sealed = openKeyring({ secret: 'abc', dataDir: dir }).encrypt('v');
    expect(keyringFromSecret('abc').decrypt(sealed)).toBe('v');
    expect(() => openKeyring({})).toThrow();
  });
});

describe('sealKeyMaterial', () => {
  const ring = keyringFromSecret('seal');

  it('encrypts a JWK holding private members and pem.private_key, keeps public material readable', () => {
    const privateJwk = JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'dd', kid: 'k' });
    const publicJwk = JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k' });
    const sealedJwk = sealKeyMaterial({ jwk: privateJwk, pem: null }, ring);
    expect(isEncrypted(sealedJwk.jwk!)).toBe(true);
    expect(sealKeyMaterial({ jwk: publicJwk, pem: null }, ring).jwk).toBe(publicJwk);
    const sealedPem = sealKeyMaterial({ jwk: null, pem: { private_key: 'PRIVATE', public_key: 'PUBLIC' } }, ring);
    expect(isEncrypted(sealedPem.pem!.private_key!)).toBe(true);
    expect(sealedPem.pem!.public_key).toBe('PUBLIC');
    expect(openKeyMaterial(sealedJwk, ring).jwk).toBe(privateJwk);
    expect(openKeyMaterial(sealedPem, ring).pem).toEqual({ private_key: 'PRIVATE', public_key: 'PUBLIC' });
    expect(sealKeyMaterial({ jwk: null, pem: { private_key: null, public_key: 'PUBLIC' } }, ring).pem).toEqual({ private_key: null, public_key: 'PUBLIC' });
  });
});
