import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { DbError } from '@gatehouse/core';
import { checkKeyMaterial, validateKey } from './validate-key';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaOther = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });

const pkcs8 = (k: typeof rsa) => k.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const spki = (k: typeof rsa) => k.publicKey.export({ type: 'spki', format: 'pem' }) as string;
const jwk = (k: typeof rsa, kid: string, half: 'privateKey' | 'publicKey' = 'privateKey') => JSON.stringify({ ...k[half].export({ format: 'jwk' }), kid });

function violation(entity: Record<string, unknown>): DbError {
  try {
    validateKey(entity);
  } catch (err) {
    return err as DbError;
  }
  throw new Error('expected a schema violation');
}

describe('validateKey: accepted material', () => {
  it.each([
    ['RSA private JWK', { kid: 'a', jwk: jwk(rsa, 'a') }],
    ['RSA public JWK', { kid: 'a', jwk: jwk(rsa, 'a', 'publicKey') }],
    ['P-256 private JWK', { kid: 'a', jwk: jwk(p256, 'a') }],
    ['P-384 public JWK', { kid: 'a', jwk: jwk(p384, 'a', 'publicKey') }],
    ['RSA PEM pair', { kid: 'a', pem: { private_key: pkcs8(rsa), public_key: spki(rsa) } }],
    ['P-384 PEM pair', { kid: 'a', pem: { private_key: pkcs8(p384), public_key: spki(p384) } }],
    ['P-256 PEM private only', { kid: 'a', pem: { private_key: pkcs8(p256), public_key: null } }],
    ['RSA PEM public only', { kid: 'a', pem: { private_key: null, public_key: spki(rsa) } }],
    ['PKCS#1 RSA private PEM', { kid: 'a', pem: { private_key: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }), public_key: null } }],
    ['SEC1 EC private PEM', { kid: 'a', pem: { private_key: p256.privateKey.export({ type: 'sec1', format: 'pem' }), public_key: spki(p256) } }],
  ])('%s', (_label, entity) => {
    expect(checkKeyMaterial(entity)).toBeNull();
    expect(() => validateKey(entity)).not.toThrow();
  });
});

describe('validateKey: Kong messages', () => {
  it('neither jwk nor pem', () => {
    const err = violation({ kid: 'a', jwk: null, pem: null });
    expect(err).toBeInstanceOf(DbError);
    expect(err.toBody()).toEqual({
      code: 2,
      name: 'schema violation',
      message: "schema violation (at least one of these fields must be non-empty: 'jwk', 'pem')",
      fields: { '@entity': ["at least one of these fields must be non-empty: 'jwk', 'pem'"] },
    });
  });

  it('both jwk and pem', () => {
    const err = violation({ kid: 'a', jwk: jwk(rsa, 'a'), pem: { private_key: pkcs8(rsa), public_key: null } });
    expect(err.message).toBe("schema violation (only one or none of these fields must be set: 'jwk', 'pem')");
    expect(err.status).toBe(400);
  });

  it('jwk that is not a string', () => {
    const err = violation({ kid: 'a', jwk: { kty: 'RSA' } });
    expect(err.fields).toEqual({ jwk: 'expected a string' });
    expect(err.message).toBe('schema violation (jwk: expected a string)');
  });

  it('jwk that is not JSON', () => {
    expect(violation({ kid: 'a', jwk: '{"kty":' }).message).toBe('schema violation (could not json decode jwk string)');
  });

  it('jwk whose kid differs from kid, or has none', () => {
    expect(violation({ kid: 'a', jwk: jwk(rsa, 'b') }).message).toBe('schema violation (kid in jwk.kid must be equal to keys.kid)');
    const noKid = JSON.stringify(rsa.privateKey.export({ format: 'jwk' }));
    expect(violation({ kid: 'a', jwk: noKid }).fields).toEqual({ '@entity': ['kid in jwk.kid must be equal to keys.kid'] });
  });

  it('jwk that is not a key', () => {
    const msg = 'schema violation (could not load JWK, likely not a valid key)';
    expect(violation({ kid: 'a', jwk: JSON.stringify({ kid: 'a', kty: 'RSA', n: 'AQAB' }) }).message).toBe(msg);
    expect(violation({ kid: 'a', jwk: JSON.stringify({ kid: 'a', kty: 'oct', k: 'c2VjcmV0' }) }).message).toBe(msg);
    expect(violation({ kid: 'a', jwk: JSON.stringify({ kid: 'a', kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }) }).message).toBe(msg);
    expect(violation({ kid: 'a', jwk: '[1,2]' }).message).toBe(msg);
  });

  it('pem without either half', () => {
    expect(violation({ kid: 'a', pem: { private_key: null, public_key: null } }).message).toBe(
      'schema violation (need to supply a PEM formatted public and/or private key.)',
    );
    expect(violation({ kid: 'a', pem: {} }).fields).toEqual({ '@entity': ['need to supply a PEM formatted public and/or private key.'] });
  });

  it('pem public key that does not load', () => {
    const err = violation({ kid: 'a', pem: { private_key: null, public_key: 'not a key' } });
    expect(err.fields).toEqual({ pem: { public_key: 'could not load public key' } });
    expect(err.message).toBe('schema violation (pem.public_key: could not load public key)');
  });

  it('a private key given as the public key is refused', () => {
    expect(violation({ kid: 'a', pem: { private_key: null, public_key: pkcs8(rsa) } }).fields).toEqual({ pem: { public_key: 'could not load public key' } });
  });

  it('pem private key that does not load', () => {
    const err = violation({ kid: 'a', pem: { private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', public_key: spki(rsa) } });
    expect(err.fields).toEqual({ pem: { private_key: 'could not load private key' } });
    expect(err.message).toBe('schema violation (pem.private_key: could not load private key)');
  });

  it('both halves unloadable name both fields', () => {
    const err = violation({ kid: 'a', pem: { private_key: 'x', public_key: 'y' } });
    expect(err.message).toBe('2 schema violations (pem.public_key: could not load public key; pem.private_key: could not load private key)');
  });

  it('pem halves that are not a pair', () => {
    expect(violation({ kid: 'a', pem: { private_key: pkcs8(rsa), public_key: spki(rsaOther) } }).message).toBe(
      'schema violation (public key does not match private key)',
    );
    expect(violation({ kid: 'a', pem: { private_key: pkcs8(p256), public_key: spki(p384) } }).message).toBe(
      'schema violation (public key does not match private key)',
    );
  });
});
