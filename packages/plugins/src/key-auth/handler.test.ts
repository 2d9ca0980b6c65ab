import { describe, expect, it } from '@jest/globals';
import { emptyConfig, type Consumer } from '@gatehouse/core';
import type { AuthResult, PluginContext } from '../contract';
import { keyAuthIndex, type KeyAuthIndex } from './credential-index';
import { keyAuthAuthenticate } from './handler';
import { keyAuthConfigSchema } from './schema';
import { unauthenticated } from '../../test/support/fake-context';

const now = Math.floor(Date.now() / 1000);
const alice: Consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'alice', custom_id: null, tags: null, created_at: now, updated_at: now };
const index: KeyAuthIndex = keyAuthIndex.compile({
  ...emptyConfig(),
  consumers: [alice],
  credentials: {
    keyauth_credentials: [
      { id: 'c-1', consumer: { id: alice.id }, key: 'secret-1', created_at: now },
      { id: 'c-expired', consumer: { id: alice.id }, key: 'old', created_at: now - 100, ttl: 10 },
      { id: 'c-fresh', consumer: { id: alice.id }, key: 'fresh', created_at: now, ttl: 3600 },
      { id: 'c-orphan', consumer: { id: '22222222-2222-4222-8222-222222222222' }, key: 'orphan', created_at: now },
    ],
  },
});

interface Request {
  headers?: Record<string, string | string[]>;
  rawHeaders?: string[];
  query?: string;
  body?: string;
  contentType?: string;
}

function contextFor(request: Request) {
  const changes = { removedHeaders: [] as string[], removedQuery: [] as string[], body: null as string | null };
  const headers: Record<string, string | string[]> = { ...(request.headers ?? {}) };
  if (request.contentType) headers['content-type'] = request.contentType;
  const ctx: PluginContext<KeyAuthIndex> = {
    req: {
      method: 'POST',
      path: '/',
      headers,
      rawHeaders: request.rawHeaders,
      query: new URLSearchParams(request.query ?? ''),
      clientIp: '127.0.0.1',
      scheme: 'http',
      readBody: async () => Buffer.from(request.body ?? ''),
    },
    upstream: {
      setHeader: () => undefined,
      removeHeader: (name) => void changes.removedHeaders.push(name),
      removeQueryArg: (name) => void changes.removedQuery.push(name),
      setBody: (body) => void (changes.body = body.toString()),
    },
    ...unauthenticated(),
    index,
  };
  return { ctx, changes };
}

async function authenticate(request: Request, config: Record<string, unknown> = {}) {
  const { ctx, changes } = contextFor(request);
  const result: AuthResult = await keyAuthAuthenticate(ctx, keyAuthConfigSchema.parse(config));
  return { result, changes };
}

const refusal = (result: AuthResult) => (result.ok ? null : { status: result.response.status, body: result.response.body, headers: result.response.headers });

describe('key-auth', () => {
  it('authenticates a key from the apikey header; the credential id is the identifier', async () => {
    const { result } = await authenticate({ headers: { apikey: 'secret-1' } });
    expect(result).toMatchObject({ ok: true, consumer: alice });
    const { credential } = result as AuthResult & { ok: true };
    expect({ id: credential.id, identifier: credential.identifier, consumerId: credential.consumerId }).toEqual({ id: 'c-1', identifier: 'c-1', consumerId: alice.id });
  });

  it('finds the key in the query string', async () => {
    expect((await authenticate({ query: 'a=1&apikey=secret-1' })).result.ok).toBe(true);
  });

  it('matches header names case-insensitively with _ and - interchangeable', async () => {
    expect((await authenticate({ headers: { 'api-key': 'secret-1' } }, { key_names: ['api_key'] })).result.ok).toBe(true);
    expect((await authenticate({ headers: { api_key: 'secret-1' } }, { key_names: ['API-Key'] })).result.ok).toBe(true);
    // query arguments are matched exactly
    expect(refusal((await authenticate({ query: 'api-key=secret-1' }, { key_names: ['api_key'] })).result)?.status).toBe(403);
  });

  it('searches each name in order: header, then query, then body; the first name with a value decides', async () => {
    const { result } = await authenticate({ headers: { second: 'unknown' }, query: 'first=secret-1' }, { key_names: ['first', 'second'] });
    expect(result.ok).toBe(true);
    const headerFirst = await authenticate({ headers: { first: 'unknown' }, query: 'first=secret-1' }, { key_names: ['first'] });
    expect(refusal(headerFirst.result)?.status).toBe(401);
  });

  it('ignores places that are switched off', async () => {
    expect(refusal((await authenticate({ headers: { apikey: 'secret-1' } }, { key_in_header: false })).result)?.status).toBe(403);
    expect(refusal((await authenticate({ query: 'apikey=secret-1' }, { key_in_query: false })).result)?.status).toBe(403);
    expect(refusal((await authenticate({ body: 'apikey=secret-1', contentType: 'application/x-www-form-urlencoded' })).result)?.status).toBe(403);
  });

  it('reads the key from form, JSON and multipart bodies with key_in_body', async () => {
    const config = { key_in_body: true };
    expect((await authenticate({ body: 'x=1&apikey=secret-1', contentType: 'application/x-www-form-urlencoded' }, config)).result.ok).toBe(true);
    expect((await authenticate({ body: '{"apikey":"secret-1"}', contentType: 'application/json' }, config)).result.ok).toBe(true);
    const multipart = '--XX\r\nContent-Disposition: form-data; name="apikey"\r\n\r\nsecret-1\r\n--XX--\r\n';
    expect((await authenticate({ body: multipart, contentType: 'multipart/form-data; boundary=XX' }, config)).result.ok).toBe(true);
    expect(refusal((await authenticate({ body: 'not json', contentType: 'application/json' }, config)).result)?.status).toBe(403);
  });

  it('answers 403 "No API key found in headers or querystring" when the key is missing or empty', async () => {
    const expected = { status: 403, body: { message: 'No API key found in headers or querystring' }, headers: undefined };
    expect(refusal((await authenticate({})).result)).toEqual(expected);
    expect(refusal((await authenticate({ headers: { apikey: '' } })).result)).toEqual(expected);
  });

  it('answers 401 "Invalid authentication credentials" with a Key challenge for an unknown key', async () => {
    expect(refusal((await authenticate({ headers: { apikey: 'nope' } })).result)).toEqual({
      status: 401,
      body: { message: 'Invalid authentication credentials' },
      headers: { 'www-authenticate': 'Key realm="gatehouse"' },
    });
    expect(refusal((await authenticate({ headers: { apikey: 'nope' } }, { realm: 'shop' })).result)?.headers).toEqual({ 'www-authenticate': 'Key realm="shop"' });
    // keys are compared exactly, and a credential whose consumer is gone does not authenticate
    expect(refusal((await authenticate({ headers: { apikey: 'SECRET-1' } })).result)?.status).toBe(401);
    expect(refusal((await authenticate({ headers: { apikey: 'orphan' } })).result)?.status).toBe(401);
  });

  it('answers 401 "Duplicate API key found" for a key given twice', async () => {
    const duplicate = { status: 401, body: { message: 'Duplicate API key found' }, headers: { 'www-authenticate': 'Key realm="gatehouse"' } };
    expect(refusal((await authenticate({ headers: { apikey: ['a', 'b'] } })).result)).toEqual(duplicate);
    expect(refusal((await authenticate({ headers: { apikey: 'a, b' }, rawHeaders: ['apikey', 'a', 'ApiKey', 'b'] })).result)).toEqual(duplicate);
    expect(refusal((await authenticate({ query: 'apikey=a&apikey=b' })).result)).toEqual(duplicate);
    expect(refusal((await authenticate({ body: '{"apikey":["a","b"]}', contentType: 'application/json' }, { key_in_body: true })).result)).toEqual(duplicate);
  });

  it('keeps a single header value that contains a comma as one key', async () => {
    const { result } = await authenticate({ headers: { apikey: 'a, b' }, rawHeaders: ['apikey', 'a, b'] });
    expect(refusal(result)?.body).toEqual({ message: 'Invalid authentication credentials' });
  });

  it('treats an expired ttl credential as unknown', async () => {
    expect(refusal((await authenticate({ headers: { apikey: 'old' } })).result)?.status).toBe(401);
    expect((await authenticate({ headers: { apikey: 'fresh' } })).result.ok).toBe(true);
  });

  it('hide_credentials removes the key from headers, query string and body', async () => {
    const fromHeader = await authenticate({ headers: { api_key: 'secret-1' } }, { key_names: ['api_key'], hide_credentials: true });
    expect(fromHeader.changes.removedHeaders).toEqual(['api_key', 'api-key']);
    expect(fromHeader.changes.removedQuery).toEqual(['api_key']);

    const fromBody = await authenticate(
      { body: '{"apikey":"secret-1","keep":true}', contentType: 'application/json' },
      { key_in_body: true, hide_credentials: true },
    );
    expect(fromBody.result.ok).toBe(true);
    expect(JSON.parse(fromBody.changes.body!)).toEqual({ keep: true });

    const form = await authenticate({ body: 'a=1&apikey=secret-1&b=2', contentType: 'application/x-www-form-urlencoded' }, { key_in_body: true, hide_credentials: true });
    expect(form.changes.body).toBe('a=1&b=2');

    const multipart = '--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XX\r\nContent-Disposition: form-data; name="apikey"\r\n\r\nsecret-1\r\n--XX--\r\n';
    const mp = await authenticate({ body: multipart, contentType: 'multipart/form-data; boundary=XX' }, { key_in_body: true, hide_credentials: true });
    expect(mp.changes.body).toBe('--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XX--\r\n');

    const shown = await authenticate({ headers: { apikey: 'secret-1' } });
    expect(shown.changes.removedHeaders).toEqual([]);
  });

  it('stays synchronous unless the body has to be read', () => {
    const { ctx } = contextFor({ headers: { apikey: 'secret-1' } });
    expect(keyAuthAuthenticate(ctx, keyAuthConfigSchema.parse({ key_in_body: true }))).not.toBeInstanceOf(Promise);
    const missing = contextFor({});
    expect(keyAuthAuthenticate(missing.ctx, keyAuthConfigSchema.parse({ key_in_body: true }))).toBeInstanceOf(Promise);
  });
});
