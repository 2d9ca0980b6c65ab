import { describe, expect, it } from '@jest/globals';
import { keys } from './keys';
import { JWK_PRIVATE_MEMBERS, redactPrivateFields } from './private-fields';

describe('redactPrivateFields', () => {
  it('removes private JWK members from JWK text and keeps the public ones', () => {
    const jwk = JSON.stringify({ kty: 'RSA', kid: 'a', n: 'N', e: 'AQAB', d: 'D', p: 'P', q: 'Q', dp: 'DP', dq: 'DQ', qi: 'QI' });
    const out = redactPrivateFields(keys.privateFields, { id: '1', jwk, pem: null });
    expect(JSON.parse(out.jwk as string)).toEqual({ kty: 'RSA', kid: 'a', n: 'N', e: 'AQAB' });
    expect(out.pem).toBeNull();
  });

  it('removes a symmetric key (k) and pem.private_key, without touching the input', () => {
    const entity = { id: '1', jwk: JSON.stringify({ kty: 'oct', k: 'secret' }), pem: { private_key: 'PRIV', public_key: 'PUB' } };
    const out = redactPrivateFields(keys.privateFields, entity);
    expect(JSON.parse(out.jwk as string)).toEqual({ kty: 'oct' });
    expect(out.pem).toEqual({ public_key: 'PUB' });
    expect(entity.pem).toEqual({ private_key: 'PRIV', public_key: 'PUB' });
  });

  it('drops JWK text that does not parse, whole; plain fields are removed, empty ones too', () => {
    expect(redactPrivateFields([{ path: 'jwk', jwkMembers: JWK_PRIVATE_MEMBERS }], { jwk: '{"d":' }).jwk).toBeNull();
    expect(redactPrivateFields([{ path: 'key' }, { path: 'key_alt' }], { cert: 'C', key: 'K', key_alt: null })).toEqual({ cert: 'C' });
  });

  it('leaves entities without private fields alone', () => {
    const entity = { id: '1' };
    expect(redactPrivateFields(undefined, entity)).toBe(entity);
  });
});
