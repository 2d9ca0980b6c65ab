import { createHash, createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { emptyConfig, type Consumer, type SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, PluginContext } from '../contract';
import type { HmacAuthIndex } from './credential-index';
import { generateHmacSecret, hmacAuthCredentialSchema } from './entities';
import { hmacAuthAuthenticate } from './handler';
import { hmacAuth } from './index';
import { HMAC_ALGORITHMS, hmacAuthConfigSchema, type HmacAlgorithm } from './schema';
import { parseHmacHeader, parseHttpDate } from './signature';
import { unauthenticated } from '../../test/support/fake-context';

const now = Math.floor(Date.now() / 1000);
const alice: Consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'alice', custom_id: null, tags: null, created_at: now, updated_at: now };
const SECRET = 'alice-hmac-secret';
let index: HmacAuthIndex;

beforeAll(() => {
  const snapshot: SnapshotConfig = {
    ...emptyConfig(),
    consumers: [alice],
    credentials: {
      hmacauth_credentials: [
        { id: 'h-1', consumer: { id: alice.id }, username: 'alice-hmac', secret: SECRET },
        { id: 'h-2', consumer: { id: '99999999-9999-4999-8999-999999999999' }, username: 'orphan', secret: SECRET },
      ],
    },
  };
  index = hmacAuth.compile!(snapshot);
});

const httpDate = (secondsFromNow = 0) => new Date((now + secondsFromNow) * 1000).toUTCString();

const NODE_DIGEST: Record<HmacAlgorithm, string> = { 'hmac-sha1': 'sha1', 'hmac-sha256': 'sha256', 'hmac-sha384': 'sha384', 'hmac-sha512': 'sha512' };

interface Request {
  method?: string;
  httpVersion?: string;
  path?: string;
  rawQuery?: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Signs the way a client following Kong's documentation does: `name: value` lines, request-line spelled out. */
function sign(request: Request, opts: { headerNames: string[]; algorithm?: HmacAlgorithm; secret?: string; username?: string }): string {
  const algorithm = opts.algorithm ?? 'hmac-sha256';
  const target = request.rawQuery ? `${request.path ?? '/'}?${request.rawQuery}` : (request.path ?? '/');
  const lines = opts.headerNames.map((name) =>
    name === 'request-line'
      ? `${request.method ?? 'GET'} ${target} HTTP/${request.httpVersion ?? '1.1'}`
      : name === '@request-target'
        ? `@request-target: ${(request.method ?? 'GET').toLowerCase()} ${target}`
        : `${name}: ${request.headers[name.toLowerCase()]}`,
  );
  const signature = createHmac(NODE_DIGEST[algorithm], opts.secret ?? SECRET).update(lines.join('\n')).digest('base64');
  return `hmac username="${opts.username ?? 'alice-hmac'}", algorithm="${algorithm}", headers="${opts.headerNames.join(' ')}", signature="${signature}"`;
}

function contextFor(request: Request) {
  const removed: string[] = [];
  let bodyReads = 0;
  const ctx: PluginContext<HmacAuthIndex> = {
    req: {
      method: request.method ?? 'GET',
      httpVersion: request.httpVersion,
      path: request.path ?? '/',
      headers: request.headers,
      query: new URLSearchParams(request.rawQuery ?? ''),
      rawQuery: request.rawQuery ?? '',
      clientIp: '127.0.0.1',
      scheme: 'http',
      readBody: async () => {
        bodyReads++;
        return request.body ?? Buffer.alloc(0);
      },
    },
    upstream: { setHeader: () => undefined, removeHeader: (n) => void removed.push(n), removeQueryArg: () => undefined, setBody: () => undefined },
    ...unauthenticated(),
    index,
  };
  return { ctx, removed, bodyReads: () => bodyReads };
}

function run(request: Request, config: Record<string, unknown> = {}) {
  const { ctx, removed, bodyReads } = contextFor(request);
  const outcome = hmacAuthAuthenticate(ctx, hmacAuthConfigSchema.parse(config));
  return { outcome, removed, bodyReads };
}

async function authenticate(request: Request, config: Record<string, unknown> = {}): Promise<AuthResult> {
  return run(request, config).outcome;
}

async function expectRefused(result: Promise<AuthResult> | AuthResult, message: string, challenge = 'hmac') {
  const settled = await result;
  if (settled.ok) throw new Error(`expected "${message}", got success`);
  expect(settled.response).toEqual({ status: 401, body: { message }, headers: { 'www-authenticate': challenge } });
}

const BAD_DATE = 'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication';
const CANNOT_VERIFY = 'HMAC signature cannot be verified';
const MISMATCH = 'HMAC signature does not match';

function signed(headerNames = ['date', 'request-line'], extra: Partial<Request> = {}, opts: Partial<Parameters<typeof sign>[1]> = {}): Request {
  const request: Request = { ...extra, headers: { date: httpDate(), ...extra.headers } };
  request.headers.authorization = sign(request, { headerNames, ...opts });
  return request;
}

describe('hmac-auth config and credentials', () => {
  it("has Kong's defaults", () => {
    expect(hmacAuthConfigSchema.parse({})).toEqual({
      hide_credentials: false,
      clock_skew: 300,
      anonymous: null,
      validate_request_body: false,
      enforce_headers: [],
      algorithms: ['hmac-sha1', 'hmac-sha256', 'hmac-sha384', 'hmac-sha512'],
      realm: null,
    });
    expect(hmacAuthConfigSchema.safeParse({ clock_skew: 0 }).success).toBe(false);
    expect(hmacAuthConfigSchema.safeParse({ algorithms: ['hmac-md5'] }).success).toBe(false);
  });

  it('is an authentication plugin with priority 1030 and its credentials at hmac-auth / hmac-auths', () => {
    expect(hmacAuth).toMatchObject({ name: 'hmac-auth', priority: 1030, auth: true, noConsumer: true });
    expect(hmacAuth.entities?.map((e) => [e.name, e.adminPath, e.consumerPath, e.endpointKey, e.uniques])).toEqual([
      ['hmacauth_credentials', 'hmac-auths', 'hmac-auth', 'username', ['username']],
    ]);
  });

  it('requires a username and generates a secret when none is given', () => {
    const consumer = { id: alice.id };
    expect(hmacAuthCredentialSchema.safeParse({ consumer }).success).toBe(false);
    expect(hmacAuthCredentialSchema.safeParse({ consumer, username: 'u' }).success).toBe(true);
    expect(generateHmacSecret({ consumer, username: 'u' }).secret).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generateHmacSecret({ consumer, username: 'u', secret: 'given' }).secret).toBe('given');
  });

  it('indexes credentials by username, leaving out those of missing consumers', () => {
    expect([...index.byUsername.keys()]).toEqual(['alice-hmac']);
  });
});

describe('hmac-auth parsing', () => {
  it('reads the four fields in order', () => {
    expect(parseHmacHeader('hmac username="u", algorithm="hmac-sha1", headers="date request-line", signature="c2ln"')).toEqual({
      username: 'u',
      algorithm: 'hmac-sha1',
      headers: ['date', 'request-line'],
      signature: 'c2ln',
    });
    expect(parseHmacHeader('Hmac username="u",algorithm="a",headers="date",signature="s"')?.username).toBe('u');
    expect(parseHmacHeader('hmac username="u", signature="s"')).toBeNull();
    expect(parseHmacHeader('Basic dTpw')).toBeNull();
  });

  it('understands the three HTTP date forms', () => {
    const expected = Date.UTC(1994, 10, 6, 8, 49, 37) / 1000;
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(expected);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT')).toBe(expected);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(expected);
    expect(parseHttpDate('1994-11-06T08:49:37Z')).toBeNull();
    expect(parseHttpDate('yesterday')).toBeNull();
  });
});

describe('hmac-auth authentication', () => {
  it('authenticates with each algorithm; the username is the identifier', async () => {
    for (const algorithm of HMAC_ALGORITHMS) {
      expect(await authenticate(signed(['date', 'request-line'], {}, { algorithm }))).toEqual({
        ok: true,
        consumer: alice,
        credential: { id: 'h-1', identifier: 'alice-hmac', consumerId: alice.id },
      });
    }
  });

  it('answers 401 Unauthorized without Authorization or Proxy-Authorization', async () => {
    await expectRefused(authenticate({ headers: { date: httpDate() } }), 'Unauthorized');
    await expectRefused(authenticate({ headers: {} }, { realm: 'partners' }), 'Unauthorized', 'hmac realm="partners"');
  });

  it('needs a Date or X-Date within the clock skew', async () => {
    const noDate = signed(['request-line']);
    delete noDate.headers.date;
    await expectRefused(authenticate(noDate), BAD_DATE);
    await expectRefused(authenticate(signed(['date'], { headers: { date: httpDate(-301) } })), BAD_DATE);
    await expectRefused(authenticate(signed(['date'], { headers: { date: httpDate(320) } })), BAD_DATE);
    await expectRefused(authenticate(signed(['date'], { headers: { date: 'not a date' } })), BAD_DATE);
    expect((await authenticate(signed(['date'], { headers: { date: httpDate(-290) } }))).ok).toBe(true);
    await expectRefused(authenticate(signed(['date'], { headers: { date: httpDate(-100) } }), { clock_skew: 60 }), BAD_DATE);
  });

  it('accepts X-Date, and a good Date next to a bad X-Date', async () => {
    const withXDate: Request = { headers: { 'x-date': httpDate() } };
    withXDate.headers.authorization = sign(withXDate, { headerNames: ['x-date', 'request-line'] });
    expect((await authenticate(withXDate)).ok).toBe(true);
    expect((await authenticate(signed(['date'], { headers: { 'x-date': 'garbage' } }))).ok).toBe(true);
  });

  it('cannot verify a malformed header, an unknown user or a refused algorithm', async () => {
    await expectRefused(authenticate({ headers: { date: httpDate(), authorization: 'hmac nonsense' } }), CANNOT_VERIFY);
    await expectRefused(authenticate(signed(['date'], {}, { username: 'mallory' })), CANNOT_VERIFY);
    await expectRefused(authenticate(signed(['date'], {}, { username: 'orphan' })), CANNOT_VERIFY);
    await expectRefused(authenticate(signed(['date'], {}, { algorithm: 'hmac-sha1' }), { algorithms: ['hmac-sha256'] }), CANNOT_VERIFY);
  });

  it('cannot verify a signature leaving out an enforced header', async () => {
    const config = { enforce_headers: ['date', 'x-api-version'] };
    const without = signed(['date', 'request-line'], { headers: { 'x-api-version': '2' } });
    await expectRefused(authenticate(without, config), CANNOT_VERIFY);
    const withIt = signed(['date', 'x-api-version', 'request-line'], { headers: { 'x-api-version': '2' } });
    expect((await authenticate(withIt, config)).ok).toBe(true);
  });

  it('refuses a wrong signature', async () => {
    await expectRefused(authenticate(signed(['date'], {}, { secret: 'wrong' })), MISMATCH);
    const request = signed(['date']);
    request.headers.authorization = request.headers.authorization!.replace(/signature="[^"]*"/, 'signature="!!not base64!!"');
    await expectRefused(authenticate(request), MISMATCH);
  });

  it('signs the request line with the method, the raw path and query', async () => {
    const request = signed(['date', 'request-line'], { method: 'POST', path: '/orders/a%20b', rawQuery: 'x=1&y=%2F' });
    expect((await authenticate(request)).ok).toBe(true);
    const tampered = { ...request, rawQuery: 'x=2&y=%2F' };
    await expectRefused(authenticate(tampered), MISMATCH);
    await expectRefused(authenticate({ ...request, method: 'PUT' }), MISMATCH);
  });

  it('should pass with GET with @request-target (the lower-case method and the path with its query)', async () => {
    const request = signed(['date', 'content-md5', '@request-target'], { path: '/request', rawQuery: 'a=1', headers: { 'content-md5': 'md5' } });
    expect((await authenticate(request)).ok).toBe(true);
    await expectRefused(authenticate({ ...request, method: 'POST' }), MISMATCH);
    await expectRefused(authenticate({ ...request, rawQuery: 'a=2' }), MISMATCH);
  });

  it('should encode http-1 requests as http/1.0: the request line carries the request\'s own HTTP version', async () => {
    const request = signed(['date', 'content-md5', 'request-line'], { path: '/request', httpVersion: '1.0', headers: { 'content-md5': 'md5' } });
    expect((await authenticate(request)).ok).toBe(true);
    await expectRefused(authenticate({ ...request, httpVersion: '1.1' }), MISMATCH);
  });

  it('covers the values of the signed headers', async () => {
    const request = signed(['date', 'content-md5'], { headers: { 'content-md5': 'abc' } });
    expect((await authenticate(request)).ok).toBe(true);
    await expectRefused(authenticate({ ...request, headers: { ...request.headers, 'content-md5': 'abd' } }), MISMATCH);
  });

  it('prefers Proxy-Authorization, and hides the used header with hide_credentials', async () => {
    const request = signed(['date']);
    const viaProxy: Request = { headers: { date: request.headers.date!, 'proxy-authorization': request.headers.authorization!, authorization: 'Bearer other' } };
    const { outcome, removed } = run(viaProxy, { hide_credentials: true });
    expect((await outcome).ok).toBe(true);
    expect(removed).toEqual(['proxy-authorization']);
    const plain = run(request, { hide_credentials: true });
    expect((await plain.outcome).ok).toBe(true);
    expect(plain.removed).toEqual(['authorization']);
    expect(run(request).removed).toEqual([]);
  });

  it('stays synchronous unless the body must be checked', async () => {
    const { outcome, bodyReads } = run(signed(['date']));
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(bodyReads()).toBe(0);
  });
});

describe('hmac-auth request body validation', () => {
  const body = Buffer.from('{"amount":10}');
  const digest = (bytes: Buffer) => `SHA-256=${createHash('sha256').update(bytes).digest('base64')}`;
  const config = { validate_request_body: true };

  it('accepts a body matching its Digest', async () => {
    const request = signed(['date', 'digest'], { method: 'POST', body, headers: { digest: digest(body) } });
    const { outcome, bodyReads } = run(request, config);
    expect(outcome).toBeInstanceOf(Promise);
    expect((await outcome).ok).toBe(true);
    expect(bodyReads()).toBe(1);
  });

  it('refuses a body that differs from its Digest, or a body without Digest', async () => {
    const tampered = signed(['date', 'digest'], { method: 'POST', body: Buffer.from('{"amount":1000}'), headers: { digest: digest(body) } });
    await expectRefused(authenticate(tampered, config), MISMATCH);
    await expectRefused(authenticate(signed(['date'], { method: 'POST', body }), config), MISMATCH);
  });

  it('accepts an empty body without Digest', async () => {
    expect((await authenticate(signed(['date']), config)).ok).toBe(true);
  });

  it('checks the signature before reading the body', async () => {
    const request = signed(['date', 'digest'], { method: 'POST', body, headers: { digest: digest(body) } }, { secret: 'wrong' });
    const { outcome, bodyReads } = run(request, config);
    await expectRefused(outcome, MISMATCH);
    expect(bodyReads()).toBe(0);
  });
});
