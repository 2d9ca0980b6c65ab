import { beforeAll, describe, expect, it } from '@jest/globals';
import { compareSync, getRounds } from 'bcryptjs';
import { emptyConfig, type Consumer, type SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, PluginContext } from '../contract';
import { basicAuthIndex, type BasicAuthIndex } from './credential-index';
import { basicAuthCredentialSchema, hashPassword, PASSWORD_COST } from './entities';
import { basicAuthAuthenticate, parseBasic } from './handler';
import { basicAuthConfigSchema } from './schema';
import { VerifiedCredentialCache } from './verified-cache';
import { unauthenticated } from '../../test/support/fake-context';

const now = Math.floor(Date.now() / 1000);
const alice: Consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'alice', custom_id: null, tags: null, created_at: now, updated_at: now };
let snapshotConfig: SnapshotConfig;
let index: BasicAuthIndex;

beforeAll(async () => {
  const stored = await hashPassword({ username: 'alice-login', password: 'open:sesame' }, null);
  snapshotConfig = {
    ...emptyConfig(),
    consumers: [alice],
    credentials: { basicauth_credentials: [{ id: 'b-1', consumer: { id: alice.id }, ...stored }] },
  };
  index = basicAuthIndex.compile(snapshotConfig);
});

const basic = (user: string, password: string, scheme = 'Basic') => `${scheme} ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function contextFor(headers: Record<string, string>, idx = index) {
  const removed: string[] = [];
  const ctx: PluginContext<BasicAuthIndex> = {
    req: { method: 'GET', path: '/', headers, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
    upstream: { setHeader: () => undefined, removeHeader: (n) => void removed.push(n), removeQueryArg: () => undefined, setBody: () => undefined },
    ...unauthenticated(),
    index: idx,
  };
  return { ctx, removed };
}

async function authenticate(headers: Record<string, string>, config: Record<string, unknown> = {}, idx = index) {
  const { ctx, removed } = contextFor(headers, idx);
  const result: AuthResult = await basicAuthAuthenticate(ctx, basicAuthConfigSchema.parse(config));
  return { result, removed };
}

const refusal = (result: AuthResult) => (result.ok ? null : result.response);

describe('basic-auth credentials', () => {
  it('stores only a bcrypt hash of the password, cost 10', async () => {
    const stored = await hashPassword({ username: 'u', password: 'pw' }, null);
    expect(stored.password).not.toBe('pw');
    expect(getRounds(stored.password as string)).toBe(PASSWORD_COST);
    expect(compareSync('pw', stored.password as string)).toBe(true);
    expect(basicAuthCredentialSchema.safeParse({ consumer: { id: alice.id }, ...stored }).success).toBe(true);
  });

  it('does not hash again a stored hash coming back on an update, or a given bcrypt hash', async () => {
    const first = await hashPassword({ username: 'u', password: 'pw' }, null);
    expect(await hashPassword({ ...first, username: 'v' }, first)).toEqual({ ...first, username: 'v' });
    expect((await hashPassword({ username: 'w', password: first.password }, null)).password).toBe(first.password);
    const changed = await hashPassword({ ...first, password: 'new' }, first);
    expect(compareSync('new', changed.password as string)).toBe(true);
  });

  it('requires username and password', () => {
    expect(basicAuthCredentialSchema.safeParse({ consumer: { id: alice.id }, username: 'x' }).success).toBe(false);
    expect(basicAuthCredentialSchema.safeParse({ consumer: { id: alice.id }, password: 'x' }).success).toBe(false);
  });
});

describe('basic-auth', () => {
  it('authenticates valid credentials; the username is the identifier', async () => {
    const { result } = await authenticate({ authorization: basic('alice-login', 'open:sesame') });
    expect(result).toEqual({ ok: true, consumer: alice, credential: { id: 'b-1', identifier: 'alice-login', consumerId: alice.id } });
  });

  it('splits at the first colon and accepts a lower-case scheme', () => {
    expect(parseBasic(basic('u', 'a:b:c', 'basic'))).toEqual({ username: 'u', password: 'a:b:c' });
    expect(parseBasic(basic('', 'pw'))).toBeNull();
    expect(parseBasic('Bearer abc')).toBeNull();
  });

  it('answers 401 "Unauthorized" with a Basic challenge when no header is sent', async () => {
    expect(refusal((await authenticate({})).result)).toEqual({ status: 401, body: { message: 'Unauthorized' }, headers: { 'www-authenticate': 'Basic realm="service"' } });
    expect(refusal((await authenticate({}, { realm: 'shop' })).result)?.headers).toEqual({ 'www-authenticate': 'Basic realm="shop"' });
  });

  it('returns 401 Unauthorized on invalid credentials: a wrong password, an unknown user or another scheme (Kong 3.9)', async () => {
    const invalid = { status: 401, body: { message: 'Unauthorized' }, headers: { 'www-authenticate': 'Basic realm="service"' } };
    expect(refusal((await authenticate({ authorization: basic('alice-login', 'wrong') })).result)).toEqual(invalid);
    expect(refusal((await authenticate({ authorization: basic('nobody', 'open:sesame') })).result)).toEqual(invalid);
    expect(refusal((await authenticate({ authorization: 'Bearer token' })).result)).toEqual(invalid);
  });

  it('answers an unknown username only after a bcrypt comparison, as for a known one (no timing oracle)', async () => {
    const config = basicAuthConfigSchema.parse({});
    const unknown = basicAuthAuthenticate(contextFor({ authorization: basic('nobody', 'pw') }).ctx, config);
    const wrong = basicAuthAuthenticate(contextFor({ authorization: basic('alice-login', 'pw') }).ctx, config);
    expect(unknown).toBeInstanceOf(Promise);
    expect(wrong).toBeInstanceOf(Promise);
    expect(await unknown).toEqual(await wrong);
  });

  it('reads Proxy-Authorization first, then Authorization', async () => {
    const good = basic('alice-login', 'open:sesame');
    expect((await authenticate({ 'proxy-authorization': good, authorization: 'Bearer x' })).result.ok).toBe(true);
    // an unknown user in Proxy-Authorization falls through to Authorization
    expect((await authenticate({ 'proxy-authorization': basic('nobody', 'x'), authorization: good })).result.ok).toBe(true);
    // a known user with the wrong password in Proxy-Authorization decides
    expect((await authenticate({ 'proxy-authorization': basic('alice-login', 'wrong'), authorization: good })).result.ok).toBe(false);
  });

  it('hide_credentials removes the header the credentials came from', async () => {
    const { removed } = await authenticate({ authorization: basic('alice-login', 'open:sesame') }, { hide_credentials: true });
    expect(removed).toEqual(['proxy-authorization', 'authorization']);
    const shown = await authenticate({ authorization: basic('alice-login', 'open:sesame') });
    expect(shown.removed).toEqual([]);
  });

  it('does not pay bcrypt again for credentials it already verified, until the next snapshot', async () => {
    const fresh = basicAuthIndex.compile(snapshotConfig);
    const headers = { authorization: basic('alice-login', 'open:sesame') };
    const first = basicAuthAuthenticate(contextFor(headers, fresh).ctx, basicAuthConfigSchema.parse({}));
    expect(first).toBeInstanceOf(Promise);
    expect((await first).ok).toBe(true);
    expect(fresh.verified.size).toBe(1);
    const second = basicAuthAuthenticate(contextFor(headers, fresh).ctx, basicAuthConfigSchema.parse({}));
    expect(second).not.toBeInstanceOf(Promise);
    expect((second as AuthResult).ok).toBe(true);
    // a wrong password is never cached, and a new snapshot starts with an empty cache
    await basicAuthAuthenticate(contextFor({ authorization: basic('alice-login', 'bad') }, fresh).ctx, basicAuthConfigSchema.parse({}));
    expect(fresh.verified.size).toBe(1);
    expect(basicAuthIndex.compile(snapshotConfig).verified.size).toBe(0);
  });
});

describe('verified credential cache', () => {
  it('is bounded: the oldest entry goes first', () => {
    const cache = new VerifiedCredentialCache(2);
    cache.add('a');
    cache.add('b');
    cache.add('c');
    expect([cache.has('a'), cache.has('b'), cache.has('c'), cache.size]).toEqual([false, true, true, 2]);
  });

  it('keys on username, password and the stored hash', () => {
    const key = VerifiedCredentialCache.keyOf('u', 'p', 'h1');
    expect(key).not.toBe(VerifiedCredentialCache.keyOf('u', 'p', 'h2'));
    expect(key).not.toBe(VerifiedCredentialCache.keyOf('u', 'q', 'h1'));
    expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
