import { generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT, type JWTPayload } from 'jose';
import { emptyConfig, type Consumer, type SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, PluginContext } from '../contract';
import { jwtIndex, type JwtIndex } from './credential-index';
import { checkJwtSecret, generateJwtFields, JWT_ALGORITHMS, jwtSecretSchema, type JwtAlgorithm } from './entities';
import { jwtAuthenticate } from './handler';
import { jwt } from './index';
import { checkJwtConfig, jwtConfigSchema } from './schema';
import { decodeToken, MULTIPLE_TOKENS, retrieveToken } from './token';
import { unauthenticated } from '../../test/support/fake-context';

const now = Math.floor(Date.now() / 1000);
const alice: Consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'alice', custom_id: null, tags: null, created_at: now, updated_at: now };
const bob: Consumer = { id: '22222222-2222-4222-8222-222222222222', username: 'bob', custom_id: 'b-1', tags: null, created_at: now, updated_at: now };
const GONE = '33333333-3333-4333-8333-333333333333';
const ED448 = generateKeyPairSync('ed448');

const ASYMMETRIC: Exclude<JwtAlgorithm, 'HS256' | 'HS384' | 'HS512'>[] = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA',
];
const HMAC_SECRET = 'a-shared-secret-of-some-length';
const RAW_BYTES = Buffer.from([0, 1, 2, 250, 251, 252, 10, 13, 99, 42, 7, 8, 9, 200, 201, 202]);

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
const pairs = {} as Record<string, Pair>;
const publicPems = {} as Record<string, string>;
let index: JwtIndex;
let snapshot: SnapshotConfig;

beforeAll(async () => {
  // one RSA key serves every RS* and PS* algorithm (RSA key generation is slow); each other family gets its own
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const rsaPkcs8 = await exportPKCS8(rsa.privateKey);
  await Promise.all(
    ASYMMETRIC.map(async (alg) => {
      pairs[alg] = alg.startsWith('RS') || alg.startsWith('PS')
        ? { privateKey: await importPKCS8(rsaPkcs8, alg), publicKey: rsa.publicKey }
        : await generateKeyPair(alg, { extractable: true });
      publicPems[alg] = await exportSPKI(pairs[alg].publicKey);
    }),
  );
  const rows: SnapshotConfig['credentials'][string] = [
    { id: 'j-hs256', consumer: { id: alice.id }, key: 'hs256-key', secret: HMAC_SECRET, algorithm: 'HS256', rsa_public_key: null },
    { id: 'j-hs384', consumer: { id: alice.id }, key: 'hs384-key', secret: HMAC_SECRET, algorithm: 'HS384', rsa_public_key: null },
    { id: 'j-hs512', consumer: { id: bob.id }, key: 'hs512-key', secret: HMAC_SECRET, algorithm: 'HS512', rsa_public_key: null },
    { id: 'j-b64', consumer: { id: bob.id }, key: 'b64-key', secret: RAW_BYTES.toString('base64url'), algorithm: 'HS256', rsa_public_key: null },
    { id: 'j-not-b64', consumer: { id: bob.id }, key: 'not-b64-key', secret: 'not*base64!', algorithm: 'HS256', rsa_public_key: null },
    { id: 'j-broken-pem', consumer: { id: bob.id }, key: 'broken-pem-key', secret: 's', algorithm: 'RS256', rsa_public_key: 'not a pem' },
    { id: 'j-orphan', consumer: { id: GONE }, key: 'orphan-key', secret: HMAC_SECRET, algorithm: 'HS256', rsa_public_key: null },
    { id: 'j-ed448', consumer: { id: bob.id }, key: 'ed448-key', secret: 'unused', algorithm: 'EdDSA', rsa_public_key: ED448.publicKey.export({ type: 'spki', format: 'pem' }) as string },
    { id: 'j-eddsa-rsa', consumer: { id: bob.id }, key: 'eddsa-rsa-key', secret: 'unused', algorithm: 'EdDSA', rsa_public_key: publicPems.RS256! },
    ...ASYMMETRIC.map((alg) => ({ id: `j-${alg}`, consumer: { id: bob.id }, key: `${alg}-key`, secret: 'unused', algorithm: alg, rsa_public_key: publicPems[alg]! })),
  ];
  snapshot = { ...emptyConfig(), consumers: [alice, bob], credentials: { jwt_secrets: rows } };
  index = jwt.compile!(snapshot);
}, 30_000);

/** jose signs no Ed448 (WebCrypto has none): the token is put together by hand and signed with node:crypto */
function signEd448(claims: JWTPayload, privateKey: KeyObject = ED448.privateKey): string {
  const signingInput = `${b64url({ typ: 'JWT', alg: 'EdDSA' })}.${b64url(claims)}`;
  return `${signingInput}.${cryptoSign(null, Buffer.from(signingInput), privateKey).toString('base64url')}`;
}

const secretBytes = (secret: string | Uint8Array) => (typeof secret === 'string' ? new TextEncoder().encode(secret) : secret);

async function sign(claims: JWTPayload, alg: string, key: Pair['privateKey'] | string | Uint8Array, header: Record<string, unknown> = {}): Promise<string> {
  const signingKey = typeof key === 'string' || key instanceof Uint8Array ? secretBytes(key) : key;
  return new SignJWT(claims).setProtectedHeader({ typ: 'JWT', ...header, alg }).sign(signingKey);
}

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

interface RequestShape {
  headers?: Record<string, string>;
  query?: string;
  rawHeaders?: string[];
  method?: string;
}

function contextFor(request: RequestShape, idx: JwtIndex = index): PluginContext<JwtIndex> {
  return {
    req: {
      method: request.method ?? 'GET',
      path: '/',
      headers: request.headers ?? {},
      rawHeaders: request.rawHeaders,
      query: new URLSearchParams(request.query ?? ''),
      clientIp: '127.0.0.1',
      scheme: 'http',
      readBody: async () => Buffer.alloc(0),
    },
    upstream: { setHeader: () => undefined, removeHeader: () => undefined, removeQueryArg: () => undefined, setBody: () => undefined },
    ...unauthenticated(),
    index: idx,
  };
}

async function authenticate(request: RequestShape, config: Record<string, unknown> = {}): Promise<AuthResult> {
  return jwtAuthenticate(contextFor(request), jwtConfigSchema.parse(config));
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

function refusal(result: AuthResult) {
  if (result.ok) throw new Error('expected a refusal');
  return result.response;
}

async function expectRefused(result: Promise<AuthResult> | AuthResult, body: unknown, challenge = 'Bearer error="invalid_token"') {
  const response = refusal(await result);
  expect(response.status).toBe(401);
  expect(response.body).toEqual(body);
  expect(response.headers).toEqual({ 'www-authenticate': challenge });
}

describe('jwt config', () => {
  it("has Kong's defaults", () => {
    expect(jwtConfigSchema.parse({})).toEqual({
      uri_param_names: ['jwt'],
      cookie_names: [],
      header_names: ['authorization'],
      key_claim_name: 'iss',
      secret_is_base64: false,
      claims_to_verify: null,
      anonymous: null,
      run_on_preflight: true,
      maximum_expiration: 0,
      realm: null,
    });
  });

  it('accepts only exp and nbf as claims to verify, and a maximum expiration of at most a year', () => {
    expect(jwtConfigSchema.safeParse({ claims_to_verify: ['iat'] }).success).toBe(false);
    expect(jwtConfigSchema.safeParse({ maximum_expiration: 31536001 }).success).toBe(false);
    expect(jwtConfigSchema.safeParse({ maximum_expiration: -1 }).success).toBe(false);
    expect(jwtConfigSchema.safeParse({ unknown: 1 }).success).toBe(false);
  });

  it('requires exp among the verified claims when maximum_expiration is set', () => {
    const errors = {
      '@entity': ["failed conditional validation given value of field 'config.maximum_expiration'"],
      claims_to_verify: 'expected to contain: exp',
    };
    expect(checkJwtConfig(jwtConfigSchema.parse({ maximum_expiration: 60 }))).toEqual(errors);
    expect(checkJwtConfig(jwtConfigSchema.parse({ maximum_expiration: 60, claims_to_verify: ['nbf'] }))).toEqual(errors);
    expect(checkJwtConfig(jwtConfigSchema.parse({ maximum_expiration: 60, claims_to_verify: ['exp'] }))).toBeNull();
    expect(checkJwtConfig(jwtConfigSchema.parse({}))).toBeNull();
  });

  it('is an authentication plugin with priority 1450 that cannot be scoped to a consumer', () => {
    expect(jwt).toMatchObject({ name: 'jwt', priority: 1450, auth: true, noConsumer: true });
    expect(jwt.entities?.map((e) => [e.name, e.adminPath, e.consumerPath, e.endpointKey])).toEqual([['jwt_secrets', 'jwts', 'jwt', 'key']]);
  });
});

describe('jwt credentials', () => {
  const consumer = { id: alice.id };

  it('defaults to HS256 and accepts every supported algorithm', () => {
    expect(jwtSecretSchema.parse({ consumer }).algorithm).toBe('HS256');
    for (const algorithm of JWT_ALGORITHMS) expect(jwtSecretSchema.safeParse({ consumer, algorithm }).success).toBe(true);
    expect(jwtSecretSchema.safeParse({ consumer, algorithm: 'none' }).success).toBe(false);
    expect(jwtSecretSchema.safeParse({ consumer, algorithm: 'HS1' }).success).toBe(false);
  });

  it('generates a 32-character key and secret when absent, and keeps given ones', () => {
    const generated = generateJwtFields({ consumer });
    expect(generated.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generated.secret).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generated.key).not.toBe(generated.secret);
    expect(generateJwtFields({ consumer, key: 'k', secret: 's' })).toEqual({ consumer, key: 'k', secret: 's' });
    expect(generateJwtFields({ consumer, key: 'k', secret: null }).key).toBe('k');
  });

  it('needs a parsable public key for every asymmetric algorithm, as Kong reports it', () => {
    const conditional = ["failed conditional validation given value of field 'algorithm'"];
    for (const algorithm of ASYMMETRIC) {
      expect(checkJwtSecret({ algorithm })).toEqual({ '@entity': conditional, rsa_public_key: 'required field missing' });
      expect(checkJwtSecret({ algorithm, rsa_public_key: 'test' })).toEqual({ '@entity': conditional, rsa_public_key: 'invalid key' });
      expect(checkJwtSecret({ algorithm, rsa_public_key: publicPems[algorithm] })).toBeNull();
    }
    expect(checkJwtSecret({ algorithm: 'HS256' })).toBeNull();
  });
});

describe('jwt token retrieval', () => {
  const req = (shape: RequestShape) => contextFor(shape).req;

  it('reads the query, then cookies, then Bearer headers; one distinct token counts once', () => {
    expect(retrieveToken(req({ query: 'jwt=a' }), ['jwt'], [], ['authorization'])).toBe('a');
    expect(retrieveToken(req({ headers: { cookie: 'x=1; tok=b' } }), ['jwt'], ['tok'], ['authorization'])).toBe('b');
    expect(retrieveToken(req({ headers: { authorization: 'bearer c' } }), ['jwt'], [], ['authorization'])).toBe('c');
    expect(retrieveToken(req({ query: 'jwt=a', headers: { authorization: 'Bearer a' } }), ['jwt'], [], ['authorization'])).toBe('a');
    expect(retrieveToken(req({ query: 'jwt=a&jwt=a' }), ['jwt'], [], ['authorization'])).toBe('a');
  });

  it('ignores empty values and non-Bearer headers', () => {
    expect(retrieveToken(req({ query: 'jwt=', headers: { authorization: 'Basic abc' } }), ['jwt'], [], ['authorization'])).toBeNull();
    expect(retrieveToken(req({ headers: { cookie: 'tok=' } }), ['jwt'], ['tok'], ['authorization'])).toBeNull();
  });

  it('reports several distinct tokens', () => {
    expect(retrieveToken(req({ query: 'jwt=a&jwt=b' }), ['jwt'], [], ['authorization'])).toBe(MULTIPLE_TOKENS);
    expect(retrieveToken(req({ query: 'jwt=a', headers: { authorization: 'Bearer b' } }), ['jwt'], [], ['authorization'])).toBe(MULTIPLE_TOKENS);
    expect(retrieveToken(req({ headers: { cookie: 'tok=a', 'x-token': 'Bearer b' } }), [], ['tok'], ['x-token'])).toBe(MULTIPLE_TOKENS);
  });

  it('takes the first of repeated custom headers, as sent', () => {
    const headers = { 'x-token': 'Bearer a, Bearer b' };
    const rawHeaders = ['X-Token', 'Bearer a', 'X-Token', 'Bearer b'];
    expect(retrieveToken(req({ headers, rawHeaders }), [], [], ['x-token'])).toBe('a');
  });

  it("decodes with Kong's error words", () => {
    const supported = new Set(['HS256']);
    const good = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ iss: 'x' })}.c2ln`;
    expect(decodeToken(good, supported)).toEqual({ header: { alg: 'HS256', typ: 'JWT' }, claims: { iss: 'x' } });
    expect(decodeToken('garbage', supported)).toBe('invalid JSON');
    expect(decodeToken(`${b64url('{not json')}.${b64url({})}.c2ln`, supported)).toBe('invalid JSON');
    expect(decodeToken(`${b64url({ alg: 'HS256', typ: 'JWS' })}.${b64url({})}.c2ln`, supported)).toBe('invalid typ');
    expect(decodeToken(`${b64url({ alg: 'none' })}.${b64url({})}.`, supported)).toBe('invalid alg');
    expect(decodeToken(`${b64url({ alg: 'HS256' })}.${b64url([1])}.c2ln`, supported)).toBe('invalid claims');
    expect(decodeToken(`${b64url({ alg: 'HS256' })}.${b64url({})}.***`, supported)).toBe('invalid signature');
  });
});

describe('jwt authentication', () => {
  it('authenticates HS256, HS384 and HS512 tokens; the credential key is the identifier', async () => {
    for (const [alg, key, consumer] of [['HS256', 'hs256-key', alice], ['HS384', 'hs384-key', alice], ['HS512', 'hs512-key', bob]] as const) {
      const result = await authenticate(bearer(await sign({ iss: key }, alg, HMAC_SECRET)));
      expect(result).toEqual({ ok: true, consumer, credential: { id: `j-${alg.toLowerCase()}`, identifier: key, consumerId: consumer.id } });
    }
  });

  it('authenticates every asymmetric algorithm family with the public key', async () => {
    for (const alg of ASYMMETRIC) {
      const result = await authenticate(bearer(await sign({ iss: `${alg}-key` }, alg, pairs[alg]!.privateKey)));
      expect(result).toEqual({ ok: true, consumer: bob, credential: { id: `j-${alg}`, identifier: `${alg}-key`, consumerId: bob.id } });
    }
  });

  it('verifies JWT with Ed25519 key', async () => {
    const result = await authenticate(bearer(await sign({ iss: 'EdDSA-key' }, 'EdDSA', pairs.EdDSA!.privateKey)));
    expect(result).toEqual({ ok: true, consumer: bob, credential: { id: 'j-EdDSA', identifier: 'EdDSA-key', consumerId: bob.id } });
  });

  it('verifies JWT with Ed448 key', async () => {
    const result = await authenticate(bearer(signEd448({ iss: 'ed448-key' })));
    expect(result).toEqual({ ok: true, consumer: bob, credential: { id: 'j-ed448', identifier: 'ed448-key', consumerId: bob.id } });
  });

  it('refuses an EdDSA token signed by another Ed448 key, or checked against a key that is not an Edwards key', async () => {
    await expectRefused(authenticate(bearer(signEd448({ iss: 'ed448-key' }, generateKeyPairSync('ed448').privateKey))), { message: 'Invalid signature' });
    await expectRefused(authenticate(bearer(signEd448({ iss: 'eddsa-rsa-key' }))), { message: 'Invalid signature' });
  });

  it('refuses a token signed by another private key', async () => {
    const other = await generateKeyPair('RS256');
    await expectRefused(authenticate(bearer(await sign({ iss: 'RS256-key' }, 'RS256', other.privateKey))), { message: 'Invalid signature' });
    const otherEc = await generateKeyPair('ES256');
    await expectRefused(authenticate(bearer(await sign({ iss: 'ES256-key' }, 'ES256', otherEc.privateKey))), { message: 'Invalid signature' });
  });

  it('refuses a token signed with another secret', async () => {
    await expectRefused(authenticate(bearer(await sign({ iss: 'hs256-key' }, 'HS256', 'wrong-secret'))), { message: 'Invalid signature' });
  });

  it("lets the credential's algorithm decide, never the token's header", async () => {
    // the classic confusion: an HMAC token whose secret is the RSA credential's public key PEM
    const forged = await sign({ iss: 'RS256-key' }, 'HS256', publicPems.RS256!);
    await expectRefused(authenticate(bearer(forged)), { message: 'Invalid algorithm' });
    const forgedEc = await sign({ iss: 'ES256-key' }, 'HS256', publicPems.ES256!);
    await expectRefused(authenticate(bearer(forgedEc)), { message: 'Invalid algorithm' });
    // another algorithm of the same family is refused too
    await expectRefused(authenticate(bearer(await sign({ iss: 'hs256-key' }, 'HS512', HMAC_SECRET))), { message: 'Invalid algorithm' });
    await expectRefused(authenticate(bearer(await sign({ iss: 'RS256-key' }, 'PS256', pairs.PS256!.privateKey))), { message: 'Invalid algorithm' });
  });

  it("refuses alg none, Kong's way", async () => {
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ iss: 'hs256-key' })}.`;
    await expectRefused(authenticate(bearer(unsigned)), { message: 'Bad token; invalid alg' });
  });

  it('answers 401 Unauthorized with a bare Bearer challenge when no token is given', async () => {
    await expectRefused(authenticate({}), { message: 'Unauthorized' }, 'Bearer');
    await expectRefused(authenticate({ headers: { authorization: 'Basic abc' } }), { message: 'Unauthorized' }, 'Bearer');
  });

  it('puts the realm in the challenge when set', async () => {
    await expectRefused(authenticate({}, { realm: 'api' }), { message: 'Unauthorized' }, 'Bearer realm="api"');
    await expectRefused(authenticate(bearer('x.y.z'), { realm: 'api' }), { message: 'Bad token; invalid JSON' }, 'Bearer realm="api" error="invalid_token"');
  });

  it('refuses several distinct tokens', async () => {
    const a = await sign({ iss: 'hs256-key' }, 'HS256', HMAC_SECRET);
    const b = await sign({ iss: 'hs384-key' }, 'HS384', HMAC_SECRET);
    await expectRefused(authenticate({ query: `jwt=${a}`, headers: { authorization: `Bearer ${b}` } }), { message: 'Multiple tokens provided' });
    expect((await authenticate({ query: `jwt=${a}`, headers: { authorization: `Bearer ${a}` } })).ok).toBe(true);
  });

  it('finds tokens in configured query arguments, cookies and headers', async () => {
    const token = await sign({ iss: 'hs256-key' }, 'HS256', HMAC_SECRET);
    expect((await authenticate({ query: `jwt=${token}` })).ok).toBe(true);
    expect((await authenticate({ query: `t=${token}` }, { uri_param_names: ['t'] })).ok).toBe(true);
    expect((await authenticate({ headers: { cookie: `session=${token}` } }, { cookie_names: ['session'] })).ok).toBe(true);
    expect((await authenticate({ headers: { 'x-jwt': `Bearer ${token}` } }, { header_names: ['X-JWT'] })).ok).toBe(true);
    await expectRefused(authenticate(bearer(token), { header_names: ['x-jwt'] }), { message: 'Unauthorized' }, 'Bearer');
  });

  it('explains a token without a usable key claim', async () => {
    await expectRefused(authenticate(bearer(await sign({ sub: 'x' }, 'HS256', HMAC_SECRET))), { message: "No mandatory 'iss' in claims" });
    await expectRefused(authenticate(bearer(await sign({ iss: '' }, 'HS256', HMAC_SECRET))), { message: "Invalid 'iss' in claims" });
    await expectRefused(authenticate(bearer(await sign({ iss: 'nobody' }, 'HS256', HMAC_SECRET))), { message: "No credentials found for given 'iss'" });
    await expectRefused(authenticate(bearer(await sign({ iss: 'orphan-key' }, 'HS256', HMAC_SECRET))), { message: "No credentials found for given 'iss'" });
  });

  it('takes the key from another claim, or from the token header', async () => {
    const inClaims = await sign({ kid: 'hs256-key' }, 'HS256', HMAC_SECRET);
    expect((await authenticate(bearer(inClaims), { key_claim_name: 'kid' })).ok).toBe(true);
    const inHeader = await sign({}, 'HS256', HMAC_SECRET, { kid: 'hs256-key' });
    expect((await authenticate(bearer(inHeader), { key_claim_name: 'kid' })).ok).toBe(true);
    await expectRefused(authenticate(bearer(inHeader)), { message: "No mandatory 'iss' in claims" });
  });

  it('refuses malformed tokens as bad tokens', async () => {
    await expectRefused(authenticate(bearer('not-a-token')), { message: 'Bad token; invalid JSON' });
    const wrongTyp = await sign({ iss: 'hs256-key' }, 'HS256', HMAC_SECRET, { typ: 'JOSE+JSON' });
    await expectRefused(authenticate(bearer(wrongTyp)), { message: 'Bad token; invalid typ' });
  });

  it('decodes the secret first with secret_is_base64', async () => {
    const token = await sign({ iss: 'b64-key' }, 'HS256', RAW_BYTES);
    expect((await authenticate(bearer(token), { secret_is_base64: true })).ok).toBe(true);
    await expectRefused(authenticate(bearer(token)), { message: 'Invalid signature' });
  });

  it('answers Invalid key/secret when the stored secret or key is unusable', async () => {
    const notBase64 = await sign({ iss: 'not-b64-key' }, 'HS256', 'not*base64!');
    await expectRefused(authenticate(bearer(notBase64), { secret_is_base64: true }), { message: 'Invalid key/secret' });
    expect((await authenticate(bearer(notBase64))).ok).toBe(true);
    const brokenPem = await sign({ iss: 'broken-pem-key' }, 'RS256', pairs.RS256!.privateKey);
    await expectRefused(authenticate(bearer(brokenPem)), { message: 'Invalid key/secret' });
  });

  it('imports a credential key once per snapshot and reuses it', () => {
    const credential = index.byKey.get('hs256-key')!;
    expect(credential.keyFor(false)).toBe(credential.keyFor(false));
    expect(credential.keyFor(true)).toBe(credential.keyFor(true));
    expect(credential.keyFor(true)).not.toBe(credential.keyFor(false));
    const rebuilt = jwtIndex.compile(snapshot).byKey.get('hs256-key')!;
    expect(rebuilt.keyFor(false)).not.toBe(credential.keyFor(false));
  });
});

describe('jwt claims', () => {
  const token = (claims: JWTPayload) => sign({ iss: 'hs256-key', ...claims }, 'HS256', HMAC_SECRET);

  it('checks nothing unless configured', async () => {
    expect((await authenticate(bearer(await token({ exp: now - 100, nbf: now + 100 })))).ok).toBe(true);
  });

  it('refuses an expired token with the errors object as body', async () => {
    await expectRefused(authenticate(bearer(await token({ exp: now - 10 })), { claims_to_verify: ['exp'] }), { exp: 'token expired' });
    expect((await authenticate(bearer(await token({ exp: now + 60 })), { claims_to_verify: ['exp'] })).ok).toBe(true);
  });

  it('refuses a token not valid yet', async () => {
    await expectRefused(authenticate(bearer(await token({ nbf: now + 60 })), { claims_to_verify: ['nbf'] }), { nbf: 'token not valid yet' });
    expect((await authenticate(bearer(await token({ nbf: now - 60 })), { claims_to_verify: ['nbf'] })).ok).toBe(true);
  });

  it('requires the verified claims to be numbers, and reports every failing claim', async () => {
    await expectRefused(authenticate(bearer(await token({})), { claims_to_verify: ['exp'] }), { exp: 'must be a number' });
    await expectRefused(authenticate(bearer(await token({ exp: 'soon' as unknown as number })), { claims_to_verify: ['exp'] }), { exp: 'must be a number' });
    await expectRefused(authenticate(bearer(await token({ exp: now - 1, nbf: now + 60 })), { claims_to_verify: ['exp', 'nbf'] }), {
      exp: 'token expired',
      nbf: 'token not valid yet',
    });
  });

  it('refuses a token living longer than maximum_expiration', async () => {
    const config = { claims_to_verify: ['exp'], maximum_expiration: 600 };
    await expectRefused(authenticate(bearer(await token({ exp: now + 3600 })), config), { exp: 'exceeds maximum allowed expiration' });
    expect((await authenticate(bearer(await token({ exp: now + 300 })), config)).ok).toBe(true);
  });

  it('checks the signature before the claims', async () => {
    const forged = await sign({ iss: 'hs256-key', exp: now - 10 }, 'HS256', 'wrong-secret');
    await expectRefused(authenticate(bearer(forged), { claims_to_verify: ['exp'] }), { message: 'Invalid signature' });
  });
});

describe('jwt HS* verification', () => {
  it('answers HS tokens synchronously, asymmetric ones through a promise', async () => {
    const hs = jwtAuthenticate(contextFor(bearer(await sign({ iss: 'hs512-key' }, 'HS512', HMAC_SECRET))), jwtConfigSchema.parse({}));
    expect(hs).toEqual({ ok: true, consumer: bob, credential: { id: 'j-hs512', identifier: 'hs512-key', consumerId: bob.id } });
    const refused = jwtAuthenticate(contextFor(bearer(await sign({ iss: 'hs256-key' }, 'HS256', 'other-secret'))), jwtConfigSchema.parse({}));
    expect(refused).toMatchObject({ ok: false, response: { status: 401, body: { message: 'Invalid signature' } } });
    const rs = jwtAuthenticate(contextFor(bearer(await sign({ iss: 'RS256-key' }, 'RS256', pairs.RS256!.privateKey))), jwtConfigSchema.parse({}));
    expect(rs).toBeInstanceOf(Promise);
    expect((await rs).ok).toBe(true);
  });

  it('refuses a token whose signature was cut, extended or changed', async () => {
    const token = await sign({ iss: 'hs256-key' }, 'HS256', HMAC_SECRET);
    const [head, payload, signature] = token.split('.') as [string, string, string];
    await expectRefused(authenticate(bearer(`${head}.${payload}.${signature.slice(0, -4)}`)), { message: 'Invalid signature' });
    await expectRefused(authenticate(bearer(`${head}.${payload}.${signature}AAAA`)), { message: 'Invalid signature' });
    const flipped = Buffer.from(signature, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    await expectRefused(authenticate(bearer(`${head}.${payload}.${flipped.toString('base64url')}`)), { message: 'Invalid signature' });
    const otherPayload = b64url({ iss: 'hs256-key', admin: true });
    await expectRefused(authenticate(bearer(`${head}.${otherPayload}.${signature}`)), { message: 'Invalid signature' });
  });

  it('decodes a base64 secret once per credential', () => {
    const credential = index.byKey.get('b64-key')!;
    expect(credential.hmacSecret(true)).toEqual(RAW_BYTES);
    expect(credential.hmacSecret(true)).toBe(credential.hmacSecret(true));
    expect(index.byKey.get('not-b64-key')!.hmacSecret(true)).toBeNull();
    expect(index.byKey.get('RS256-key')!.hmacSecret(false)).toBeNull();
  });
});
