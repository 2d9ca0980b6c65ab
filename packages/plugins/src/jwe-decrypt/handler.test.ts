import { KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { emptyConfig, type SnapshotConfig, type SnapshotKey } from '@gatehouse/core';
import type { PluginContext, PluginResponse } from '../contract';
import { jweDecrypt } from './index';
import type { JweKeyIndex } from './key-index';
import { jweDecryptConfigSchema, type JweDecryptConfig } from './schema';
import { unauthenticated } from '../../test/support/fake-context';

const SET_A = '0b6f2b8e-6a8b-4c55-9a55-3f3c2a1b0001';
const SET_B = '0b6f2b8e-6a8b-4c55-9a55-3f3c2a1b0002';
const SET_EMPTY = '0b6f2b8e-6a8b-4c55-9a55-3f3c2a1b0003';

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
const pairs: Record<string, Pair> = {};
let index: JweKeyIndex;

function key(id: string, kid: string, set: string | null, material: Pick<SnapshotKey, 'jwk' | 'pem'>): SnapshotKey {
  return { id, name: null, kid, set: set ? { id: set } : null, ...material };
}

beforeAll(async () => {
  pairs.rsa = (await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true }));
  pairs.p256 = (await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true }));
  pairs.p384 = (await generateKeyPair('ECDH-ES', { crv: 'P-384', extractable: true }));
  pairs.rsaPem = (await generateKeyPair('RSA-OAEP', { modulusLength: 2048, extractable: true }));
  pairs.p256Pem = (await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true }));
  pairs.shadow = (await generateKeyPair('RSA-OAEP', { modulusLength: 2048, extractable: true }));

  const jwkOf = async (p: Pair, kid: string) => JSON.stringify({ ...(await exportJWK(p.privateKey)), kid });
  const config: SnapshotConfig = {
    ...emptyConfig(),
    key_sets: [
      { id: SET_A, name: 'set-a' },
      { id: SET_B, name: 'set-b' },
      { id: SET_EMPTY, name: null },
    ],
    keys: [
      key('k1', 'rsa', SET_A, { jwk: await jwkOf(pairs.rsa, 'rsa'), pem: null }),
      key('k2', 'p256', SET_A, { jwk: await jwkOf(pairs.p256, 'p256'), pem: null }),
      key('k3', 'p384', SET_B, { jwk: await jwkOf(pairs.p384, 'p384'), pem: null }),
      key('k4', 'rsa-pem', SET_B, { jwk: null, pem: { private_key: await exportPKCS8(pairs.rsaPem.privateKey), public_key: await exportSPKI(pairs.rsaPem.publicKey) } }),
      key('k5', 'p256-pem', SET_B, { jwk: null, pem: { private_key: await exportPKCS8(pairs.p256Pem.privateKey), public_key: null } }),
      key('k6', 'public-only', SET_B, { jwk: JSON.stringify({ ...(await exportJWK(pairs.rsa.publicKey)), kid: 'public-only' }), pem: null }),
      key('k7', 'public-pem', SET_B, { jwk: null, pem: { private_key: null, public_key: await exportSPKI(pairs.rsa.publicKey) } }),
      // the same kid in set B with another key: set A comes first in the config, so A's key wins
      key('k8', 'rsa', SET_B, { jwk: await jwkOf(pairs.shadow, 'rsa'), pem: null }),
      key('k9', 'no-set', null, { jwk: await jwkOf(pairs.rsa, 'no-set'), pem: null }),
    ],
  };
  index = jweDecrypt.compile!(config);
});

async function encrypt(pair: Pair, header: Record<string, unknown>, plaintext = 'the-inner-token'): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header as any).encrypt(KeyObject.from(pair.publicKey));
}

function conf(overrides: Partial<JweDecryptConfig> = {}): JweDecryptConfig {
  return jweDecryptConfigSchema.parse({ key_sets: ['set-a', 'set-b'], ...overrides });
}

/** A request context with just what the plugin touches; it records the upstream header changes. */
function fakeContext(headers: Record<string, string | string[]>) {
  const sent: Record<string, string> = {};
  const ctx = {
    req: { method: 'GET', path: '/', headers, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
    upstream: {
      setHeader: (name: string, value: string) => void (sent[name] = value),
      removeHeader: (name: string) => void delete sent[name],
      removeQueryArg: () => undefined,
      setBody: () => undefined,
    },
    ...unauthenticated(),
    index,
  } satisfies PluginContext<JweKeyIndex>;
  return { ctx, sent };
}

async function run(headers: Record<string, string | string[]>, config = conf()): Promise<{ response: PluginResponse | void; sent: Record<string, string> }> {
  const { ctx, sent } = fakeContext(headers);
  const response = await jweDecrypt.access!(ctx, config);
  return { response, sent };
}

describe('jwe-decrypt definition', () => {
  it('has Kong priority 1999, is not an auth plugin, and cannot be scoped to a consumer', () => {
    expect(jweDecrypt.name).toBe('jwe-decrypt');
    expect(jweDecrypt.priority).toBe(1999);
    expect(jweDecrypt.auth).toBe(false);
    expect(jweDecrypt.noConsumer).toBe(true);
  });

  it('requires key_sets and defaults the header names and strict', () => {
    const missing = jweDecryptConfigSchema.safeParse({});
    expect(missing.success).toBe(false);
    expect(missing.error!.issues[0]!.path).toEqual(['key_sets']);
    expect(jweDecryptConfigSchema.parse({ key_sets: ['x'] })).toEqual({
      key_sets: ['x'],
      lookup_header_name: 'Authorization',
      forward_header_name: 'Authorization',
      strict: true,
    });
  });
});

describe('jwe-decrypt algorithms', () => {
  const cases: Array<[string, string, string, string]> = [
    ['rsa', 'rsa', 'RSA-OAEP', 'A256GCM'],
    ['rsa', 'rsa', 'RSA-OAEP-256', 'A128GCM'],
    ['rsa', 'rsa', 'RSA-OAEP-256', 'A128CBC-HS256'],
    ['rsa', 'rsa', 'RSA-OAEP', 'A256CBC-HS512'],
    ['p256', 'p256', 'ECDH-ES', 'A256GCM'],
    ['p256', 'p256', 'ECDH-ES+A128KW', 'A128GCM'],
    ['p256', 'p256', 'ECDH-ES+A256KW', 'A128CBC-HS256'],
    ['p384', 'p384', 'ECDH-ES', 'A256CBC-HS512'],
    ['p384', 'p384', 'ECDH-ES+A256KW', 'A256GCM'],
    ['p384', 'p384', 'ECDH-ES+A128KW', 'A128CBC-HS256'],
    ['rsaPem', 'rsa-pem', 'RSA-OAEP-256', 'A256GCM'],
    ['rsaPem', 'rsa-pem', 'RSA-OAEP', 'A128CBC-HS256'],
    ['p256Pem', 'p256-pem', 'ECDH-ES+A128KW', 'A256GCM'],
    ['p256Pem', 'p256-pem', 'ECDH-ES', 'A256CBC-HS512'],
  ];
  it.each(cases)('%s key (kid %s) decrypts %s with %s and forwards the plaintext', async (pair, kid, alg, enc) => {
    const token = await encrypt(pairs[pair]!, { alg, enc, kid }, `plain-${alg}-${enc}`);
    const { response, sent } = await run({ authorization: token });
    expect(response).toBeUndefined();
    expect(sent).toEqual({ Authorization: `plain-${alg}-${enc}` });
  });
});

describe('jwe-decrypt request handling', () => {
  it('keeps a Bearer prefix (any case) on the forwarded value', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'rsa' });
    expect((await run({ authorization: `Bearer ${token}` })).sent).toEqual({ Authorization: 'Bearer the-inner-token' });
    expect((await run({ authorization: `bEaReR ${token}` })).sent).toEqual({ Authorization: 'Bearer the-inner-token' });
  });

  it('reads lookup_header_name and writes forward_header_name', async () => {
    const token = await encrypt(pairs.p256!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p256' });
    const { response, sent } = await run({ 'x-jwe': token }, conf({ lookup_header_name: 'X-JWE', forward_header_name: 'X-Plain' }));
    expect(response).toBeUndefined();
    expect(sent).toEqual({ 'X-Plain': 'the-inner-token' });
  });

  it('takes the first value of a repeated header', async () => {
    const token = await encrypt(pairs.p256!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p256' });
    expect((await run({ authorization: [token, 'garbage'] })).sent).toEqual({ Authorization: 'the-inner-token' });
  });

  it('searches key sets in the configured order: the first set holding the kid wins', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' });
    expect((await run({ authorization: token }, conf({ key_sets: ['set-a', 'set-b'] }))).response).toBeUndefined();
    // set B's "rsa" is another key, so set-b first fails to decrypt
    expect((await run({ authorization: token }, conf({ key_sets: ['set-b', 'set-a'] }))).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('accepts key-set ids as well as names', async () => {
    const token = await encrypt(pairs.p384!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p384' });
    expect((await run({ authorization: token }, conf({ key_sets: [SET_B] }))).sent).toEqual({ Authorization: 'the-inner-token' });
  });

  it('strict: a missing header is 403 could not find token', async () => {
    expect((await run({})).response).toEqual({ status: 403, body: { message: 'could not find token' } });
    expect((await run({ authorization: '' })).response).toEqual({ status: 403, body: { message: 'could not find token' } });
  });

  it('not strict: a missing header passes through untouched', async () => {
    const { response, sent } = await run({}, conf({ strict: false }));
    expect(response).toBeUndefined();
    expect(sent).toEqual({});
  });

  it('not strict still refuses a token that is present but bad', async () => {
    expect((await run({ authorization: 'a.b.c' }, conf({ strict: false }))).response).toEqual({ status: 400, body: { message: 'failed to decode token' } });
  });

  it('a token without five parts is 400 failed to decode token', async () => {
    for (const bad of ['abc', 'a.b.c', 'a.b.c.d', 'a.b.c.d.e.f', 'Bearer x.y']) {
      expect((await run({ authorization: bad })).response).toEqual({ status: 400, body: { message: 'failed to decode token' } });
    }
  });

  it('an undecodable protected header is 400 failed to decode token', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' });
    const parts = token.split('.');
    expect((await run({ authorization: ['!!!', ...parts.slice(1)].join('.') })).response).toEqual({ status: 400, body: { message: 'failed to decode token' } });
    expect((await run({ authorization: ['', ...parts.slice(1)].join('.') })).response).toEqual({ status: 400, body: { message: 'failed to decode token' } });
  });

  it('enc without kid is 400 JWE needs to contain jwk kid and enc fields', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM' });
    expect((await run({ authorization: token })).response).toEqual({ status: 400, body: { message: 'JWE needs to contain jwk kid and enc fields' } });
  });

  it('a header with neither kid nor enc fails the key lookup: 403', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'RSA-OAEP' })).toString('base64url');
    expect((await run({ authorization: `${header}.a.b.c.d` })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('an unknown kid is 403 failed to decrypt token', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'nope' });
    expect((await run({ authorization: token })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('a key without a set is not reachable through key sets', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'no-set' });
    expect((await run({ authorization: token })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('a kid in a set that is not configured is not found', async () => {
    const token = await encrypt(pairs.p384!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p384' });
    expect((await run({ authorization: token }, conf({ key_sets: ['set-a'] }))).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('an unknown key set is 403 when it is reached', async () => {
    const token = await encrypt(pairs.p384!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p384' });
    expect((await run({ authorization: token }, conf({ key_sets: ['missing', 'set-b'] }))).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
    // a set holding the kid before the missing one answers first
    expect((await run({ authorization: token }, conf({ key_sets: ['set-b', 'missing'] }))).response).toBeUndefined();
  });

  it('a key with only public material cannot decrypt: 403', async () => {
    for (const kid of ['public-only', 'public-pem']) {
      const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid });
      expect((await run({ authorization: token })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
    }
  });

  it('a token encrypted to another key with the same kid is 403', async () => {
    const wrong = await encrypt(pairs.shadow!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' });
    expect((await run({ authorization: wrong })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('a tampered token is 403', async () => {
    const token = await encrypt(pairs.p256!, { alg: 'ECDH-ES+A128KW', enc: 'A128GCM', kid: 'p256' });
    const parts = token.split('.');
    const cipher = Buffer.from(parts[3]!, 'base64url');
    cipher[0] ^= 0xff;
    parts[3] = cipher.toString('base64url');
    expect((await run({ authorization: parts.join('.') })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
    const tag = Buffer.from(parts[4]!, 'base64url');
    tag[0] ^= 0x01;
    expect((await run({ authorization: [...parts.slice(0, 4), tag.toString('base64url')].join('.') })).response).toEqual({
      status: 403,
      body: { message: 'failed to decrypt token' },
    });
  });

  it('a token for direct symmetric encryption (dir) is 403', async () => {
    const secret = new Uint8Array(32).fill(7);
    const token = await new CompactEncrypt(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'rsa' }).encrypt(secret);
    expect((await run({ authorization: token })).response).toEqual({ status: 403, body: { message: 'failed to decrypt token' } });
  });

  it('compiles an empty snapshot and a snapshot with broken material without throwing', () => {
    const empty = jweDecrypt.compile!(emptyConfig());
    expect(empty.setIds.size).toBe(0);
    const broken = jweDecrypt.compile!({
      ...emptyConfig(),
      key_sets: [{ id: SET_A, name: 'a' }],
      keys: [key('x', 'bad', SET_A, { jwk: '{not json', pem: null }), key('y', 'bad-pem', SET_A, { jwk: null, pem: { private_key: 'nope', public_key: null } })],
    });
    expect(broken.keysBySet.get(SET_A)!.get('bad')).toBeNull();
    expect(broken.keysBySet.get(SET_A)!.get('bad-pem')).toBeNull();
    expect(broken.setIds.get('a')).toBe(SET_A);
  });
});
