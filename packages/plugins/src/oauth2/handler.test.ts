import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { emptyConfig, type Consumer, type Service } from '@gatehouse/core';
import type { AuthResult, PluginContext, PluginResponse } from '../contract';
import { oauth2Index, type OAuth2Index } from './credential-index';
import { oauth2 } from './index';
import { MemoryTokenStore } from './memory-token-store';
import { oauth2ConfigSchema, type OAuth2Config } from './schema';
import { hashSecret } from './secret';
import { tokenDigest, type OAuth2Token } from './token-store';

const now = Math.floor(Date.now() / 1000);
const alice: Consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'alice', custom_id: null, tags: null, created_at: now, updated_at: now };
const serviceA = { id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', name: 'a' } as Service;
const serviceB = { id: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', name: 'b' } as Service;
const PROVISION = 'provision-key-1';
const CB = 'https://app.example/cb';

let index: OAuth2Index;
let store: MemoryTokenStore;

beforeEach(async () => {
  store = new MemoryTokenStore();
  index = oauth2Index.compile({
    ...emptyConfig(),
    consumers: [alice],
    credentials: {
      oauth2_credentials: [
        { id: 'cred-app', consumer: { id: alice.id }, name: 'app', client_id: 'app-id', client_secret: 'app-secret', hash_secret: false, redirect_uris: [CB, 'https://app.example/other?keep=1'], client_type: 'confidential' },
        { id: 'cred-other', consumer: { id: alice.id }, name: 'other', client_id: 'other-id', client_secret: 'other-secret', hash_secret: false, redirect_uris: [CB], client_type: 'confidential' },
        { id: 'cred-hashed', consumer: { id: alice.id }, name: 'hashed', client_id: 'hashed-id', client_secret: await hashSecret('hashed-secret'), hash_secret: true, redirect_uris: null, client_type: 'confidential' },
        { id: 'cred-public', consumer: { id: alice.id }, name: 'spa', client_id: 'spa-id', client_secret: 'spa-secret', hash_secret: false, redirect_uris: [CB], client_type: 'public' },
        { id: 'cred-orphan', consumer: { id: '22222222-2222-4222-8222-222222222222' }, name: 'x', client_id: 'orphan-id', client_secret: 's', hash_secret: false, redirect_uris: null, client_type: 'confidential' },
      ],
    },
  });
});

const config = (fields: Record<string, unknown> = {}): OAuth2Config =>
  oauth2ConfigSchema.parse({
    provision_key: PROVISION,
    enable_authorization_code: true,
    enable_client_credentials: true,
    enable_password_grant: true,
    enable_implicit_grant: true,
    ...fields,
  });

interface Request {
  method?: string;
  path?: string;
  headers?: Record<string, string | string[]>;
  rawHeaders?: string[];
  query?: string;
  form?: Record<string, string>;
  json?: unknown;
  scheme?: string;
  fromTrustedProxy?: boolean;
  service?: Service | null;
}

function contextFor(request: Request) {
  const changes = { set: new Map<string, string>(), removed: [] as string[], removedQuery: [] as string[], body: null as string | null };
  const headers: Record<string, string | string[]> = { ...(request.headers ?? {}) };
  let body = '';
  if (request.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(request.form).toString();
  } else if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  }
  const ctx: PluginContext<OAuth2Index> = {
    req: {
      method: request.method ?? 'POST',
      path: request.path ?? '/api/oauth2/token',
      headers,
      rawHeaders: request.rawHeaders,
      query: new URLSearchParams(request.query ?? ''),
      clientIp: '10.0.0.1',
      scheme: request.scheme ?? 'https',
      fromTrustedProxy: request.fromTrustedProxy,
      readBody: async () => Buffer.from(body),
    },
    upstream: {
      setHeader: (name, value) => void changes.set.set(name, value),
      removeHeader: (name) => void changes.removed.push(name),
      removeQueryArg: (name) => void changes.removedQuery.push(name),
      setBody: (b) => void (changes.body = b.toString()),
    },
    route: null,
    service: request.service === undefined ? serviceA : request.service,
    consumer: null,
    credential: null,
    anonymous: false,
    index,
    runtime: { oauth2Tokens: store },
  };
  return { ctx, changes };
}

async function endpoint(request: Request, conf: OAuth2Config = config()): Promise<PluginResponse & { body: any; headers: Record<string, string> }> {
  const { ctx } = contextFor(request);
  expect(oauth2.endpoint!.matches(ctx, conf)).toBe(true);
  return (await oauth2.endpoint!.serve(ctx, conf)) as PluginResponse & { body: any; headers: Record<string, string> };
}

const token = (form: Record<string, string>, extra: Request = {}, conf?: OAuth2Config) => endpoint({ form, ...extra }, conf);
const authorize = (form: Record<string, string>, extra: Request = {}, conf?: OAuth2Config) => endpoint({ path: '/api/oauth2/authorize', form, ...extra }, conf);
const appCredentials = { client_id: 'app-id', client_secret: 'app-secret' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function access(request: Request, conf: OAuth2Config = config()) {
  const { ctx, changes } = contextFor({ method: 'GET', path: '/api/things', ...request });
  expect(oauth2.endpoint!.matches(ctx, conf)).toBe(false);
  const result = (await oauth2.authenticate!(ctx, conf))!;
  return { result, changes };
}

const refusal = (result: AuthResult) => (result.ok ? null : result.response);
const params = (redirect: string) => Object.fromEntries(new URL(redirect.replace('#', '?')).searchParams);
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

describe('oauth2 endpoints', () => {
  it('matches paths ending with /oauth2/token or /oauth2/authorize, trailing slash allowed', () => {
    const matches = (path: string) => oauth2.endpoint!.matches(contextFor({ path }).ctx, config());
    expect(matches('/oauth2/token')).toBe(true);
    expect(matches('/api/v1/oauth2/authorize/')).toBe(true);
    expect(matches('/oauth2/token/more')).toBe(false);
    expect(matches('/api/oauth2/tokens')).toBe(false);
  });

  it('answers other methods than POST with 405 invalid_method', async () => {
    const reply = await endpoint({ method: 'GET' });
    expect(reply.status).toBe(405);
    expect(reply.body).toEqual({ error: 'invalid_method', error_description: 'The HTTP method GET is invalid for the token endpoint' });
    expect(reply.headers['www-authenticate']).toBe('Bearer error="invalid_method" error_description="The HTTP method GET is invalid for the token endpoint"');
    const put = await endpoint({ method: 'PUT', path: '/oauth2/authorize' }, config({ realm: 'shop' }));
    expect(put.body.error_description).toBe('The HTTP method PUT is invalid for the authorization endpoint');
    expect(put.headers['www-authenticate']).toBe('Bearer realm="shop" error="invalid_method" error_description="The HTTP method PUT is invalid for the authorization endpoint"');
  });

  describe('HTTPS', () => {
    it('refuses plain HTTP with 400 access_denied "You must use HTTPS"', async () => {
      const reply = await token({ grant_type: 'client_credentials', ...appCredentials }, { scheme: 'http' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: 'access_denied', error_description: 'You must use HTTPS' });
      expect(reply.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache' });
      const auth = await authorize({ provision_key: PROVISION }, { scheme: 'http' });
      expect(auth.body).toEqual({ error: 'access_denied', error_description: 'You must use HTTPS' });
    });

    it('believes X-Forwarded-Proto: https from a trusted proxy with accept_http_if_already_terminated', async () => {
      const terminated = config({ accept_http_if_already_terminated: true });
      const form = { grant_type: 'client_credentials', ...appCredentials };
      const ok = await token(form, { scheme: 'http', fromTrustedProxy: true, headers: { 'x-forwarded-proto': 'HTTPS' } }, terminated);
      expect(ok.status).toBe(200);
      // not without the flag, not from an untrusted peer, not with another scheme
      expect((await token(form, { scheme: 'http', fromTrustedProxy: true, headers: { 'x-forwarded-proto': 'https' } })).status).toBe(400);
      expect((await token(form, { scheme: 'http', headers: { 'x-forwarded-proto': 'https' } }, terminated)).status).toBe(400);
      expect((await token(form, { scheme: 'http', fromTrustedProxy: true, headers: { 'x-forwarded-proto': 'http' } }, terminated)).status).toBe(400);
      const twice = await token(
        form,
        { scheme: 'http', fromTrustedProxy: true, headers: { 'x-forwarded-proto': 'https, https' }, rawHeaders: ['X-Forwarded-Proto', 'https', 'X-Forwarded-Proto', 'https'] },
        terminated,
      );
      expect(twice.body).toEqual({ error: 'access_denied', error_description: 'Only one X-Forwarded-Proto header allowed' });
    });
  });

  describe('client credentials grant', () => {
    it('issues a bearer token without refresh token, client authenticated by body parameters', async () => {
      const reply = await token({ grant_type: 'client_credentials', ...appCredentials, state: 'xyz' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ token_type: 'bearer', access_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/), expires_in: 7200, state: 'xyz' });
      expect(reply.headers).toEqual({ 'cache-control': 'no-store', pragma: 'no-cache' });
      const stored = await store.findByAccessDigest(tokenDigest(reply.body.access_token));
      expect(stored).toMatchObject({ credential: { id: 'cred-app' }, service: { id: serviceA.id }, refresh_token_digest: null, expires_in: 7200, authenticated_userid: null });
    });

    it('authenticates the client with a Basic header; a bad one is a 401 with a Basic challenge', async () => {
      const ok = await token({ grant_type: 'client_credentials' }, { headers: { authorization: basic('app-id', 'app-secret') } });
      expect(ok.status).toBe(200);
      const bad = await token({ grant_type: 'client_credentials' }, { headers: { authorization: basic('app-id', 'wrong') } });
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual({ error: 'invalid_client', error_description: 'Invalid client authentication' });
      expect(bad.headers['www-authenticate']).toBe('Basic realm="OAuth2.0"');
      const unknown = await token({ grant_type: 'client_credentials' }, { headers: { authorization: basic('nobody', 'x') } });
      expect(unknown.status).toBe(401);
    });

    it('answers 400 invalid_client for bad body credentials, unknown clients and applications of deleted consumers', async () => {
      const forms: Array<Record<string, string>> = [
        { client_id: 'app-id', client_secret: 'wrong' },
        { client_id: 'app-id' },
        { client_id: 'nobody', client_secret: 'x' },
        { client_id: 'orphan-id', client_secret: 's' },
        {},
      ];
      for (const form of forms) {
        const reply = await token({ grant_type: 'client_credentials', ...form });
        expect({ status: reply.status, body: reply.body, challenge: reply.headers['www-authenticate'] }).toEqual({
          status: 400,
          body: { error: 'invalid_client', error_description: 'Invalid client authentication' },
          challenge: undefined,
        });
      }
    });

    it('verifies a hashed secret', async () => {
      expect((await token({ grant_type: 'client_credentials', client_id: 'hashed-id', client_secret: 'hashed-secret' })).status).toBe(200);
      expect((await token({ grant_type: 'client_credentials', client_id: 'hashed-id', client_secret: 'nope' })).body.error).toBe('invalid_client');
    });

    it('refuses grant types that are unknown or switched off', async () => {
      const unsupported = { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' };
      expect((await token({ grant_type: 'magic', ...appCredentials })).body).toEqual(unsupported);
      expect((await token({ ...appCredentials })).body).toEqual(unsupported);
      const off = config({ enable_client_credentials: false });
      expect((await token({ grant_type: 'client_credentials', ...appCredentials }, {}, off)).body).toEqual(unsupported);
    });

    it('checks the provision key only when an authenticated_userid is given', async () => {
      const bad = await token({ grant_type: 'client_credentials', ...appCredentials, authenticated_userid: 'u1', provision_key: 'wrong' });
      expect(bad.body).toEqual({ error: 'invalid_provision_key', error_description: 'Invalid provision_key' });
      const good = await token({ grant_type: 'client_credentials', ...appCredentials, authenticated_userid: 'u1', provision_key: PROVISION });
      expect((await store.findByAccessDigest(tokenDigest(good.body.access_token)))!.authenticated_userid).toBe('u1');
    });

    it('grants the asked scopes out of the configured ones; mandatory_scope demands one', async () => {
      const scoped = config({ scopes: ['read', 'write'], mandatory_scope: true });
      const ok = await token({ grant_type: 'client_credentials', ...appCredentials, scope: 'read  write' }, {}, scoped);
      expect((await store.findByAccessDigest(tokenDigest(ok.body.access_token)))!.scope).toBe('read write');
      expect((await token({ grant_type: 'client_credentials', ...appCredentials, scope: 'read admin' }, {}, scoped)).body).toEqual({
        error: 'invalid_scope',
        error_description: '"admin" is an invalid scope',
      });
      expect((await token({ grant_type: 'client_credentials', ...appCredentials }, {}, scoped)).body).toEqual({ error: 'invalid_scope', error_description: 'You must specify a scope' });
      const repeated = await endpoint({ query: 'scope=read&scope=write', form: { grant_type: 'client_credentials', ...appCredentials } }, config({ scopes: ['read', 'write'] }));
      expect(repeated.body).toEqual({ error: 'invalid_scope', error_description: 'scope must be a string' });
    });

    it('reads JSON bodies and query parameters too', async () => {
      expect((await endpoint({ json: { grant_type: 'client_credentials', ...appCredentials } })).status).toBe(200);
      expect((await endpoint({ query: 'grant_type=client_credentials&client_id=app-id&client_secret=app-secret' })).status).toBe(200);
    });
  });

  describe('password grant', () => {
    it('issues access and refresh tokens for the authenticated user', async () => {
      const reply = await token({ grant_type: 'password', ...appCredentials, provision_key: PROVISION, authenticated_userid: 'user-7' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ token_type: 'bearer', access_token: expect.any(String), expires_in: 7200, refresh_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/) });
      expect((await store.findByAccessDigest(tokenDigest(reply.body.access_token)))!.authenticated_userid).toBe('user-7');
    });

    it('needs the provision key and an authenticated_userid', async () => {
      expect((await token({ grant_type: 'password', ...appCredentials, authenticated_userid: 'u' })).body.error).toBe('invalid_provision_key');
      expect((await token({ grant_type: 'password', ...appCredentials, provision_key: PROVISION, authenticated_userid: '  ' })).body).toEqual({
        error: 'invalid_authenticated_userid',
        error_description: 'Missing authenticated_userid parameter',
      });
    });

    it('refuses a redirect_uri the application did not register', async () => {
      const reply = await token({ grant_type: 'password', ...appCredentials, provision_key: PROVISION, authenticated_userid: 'u', redirect_uri: 'https://evil.example/' });
      expect(reply.body).toEqual({ error: 'invalid_request', error_description: 'Invalid redirect_uri that does not match with any redirect_uri created with the application' });
    });

    it('gives no refresh token and no expires_in when tokens never expire', async () => {
      const reply = await token({ grant_type: 'password', ...appCredentials, provision_key: PROVISION, authenticated_userid: 'u' }, {}, config({ token_expiration: 0 }));
      expect(reply.body).toEqual({ token_type: 'bearer', access_token: expect.any(String) });
      expect((await store.findByAccessDigest(tokenDigest(reply.body.access_token)))!.removed_at_ms).toBeNull();
    });
  });

  describe('authorization code grant', () => {
    const askCode = (extra: Record<string, string> = {}, conf?: OAuth2Config) =>
      authorize({ response_type: 'code', client_id: 'app-id', provision_key: PROVISION, authenticated_userid: 'user-1', state: 's1', ...extra }, {}, conf);

    it('answers the authorize request with the redirect URI carrying the code and state', async () => {
      const reply = await askCode({ scope: 'read' }, config({ scopes: ['read'] }));
      expect(reply.status).toBe(200);
      expect(reply.body.redirect_uri).toMatch(/^https:\/\/app\.example\/cb\?code=[A-Za-z0-9]{32}&state=s1$/);
      expect(reply.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache' });
      const code = await store.findCode(tokenDigest(params(reply.body.redirect_uri).code!));
      expect(code).toMatchObject({ credential: { id: 'cred-app' }, authenticated_userid: 'user-1', scope: 'read', service: { id: serviceA.id } });
    });

    it('keeps the query of the registered redirect URI', async () => {
      const reply = await askCode({ redirect_uri: 'https://app.example/other?keep=1' });
      expect(params(reply.body.redirect_uri)).toEqual({ code: expect.any(String), keep: '1', state: 's1' });
    });

    it('exchanges the code once for tokens carrying the user and scope', async () => {
      const code = params((await askCode()).body.redirect_uri).code!;
      const reply = await token({ grant_type: 'authorization_code', ...appCredentials, code });
      expect(reply.status).toBe(200);
      expect(reply.body.refresh_token).toBeDefined();
      expect((await store.findByAccessDigest(tokenDigest(reply.body.access_token)))!.authenticated_userid).toBe('user-1');
      expect((await token({ grant_type: 'authorization_code', ...appCredentials, code })).body).toEqual({ error: 'invalid_request', error_description: 'Invalid code' });
    });

    it('refuses a code of another application or another service, and unknown codes', async () => {
      const code = params((await askCode()).body.redirect_uri).code!;
      const invalid = { error: 'invalid_request', error_description: 'Invalid code' };
      expect((await token({ grant_type: 'authorization_code', client_id: 'other-id', client_secret: 'other-secret', code })).body).toEqual(invalid);
      expect((await token({ grant_type: 'authorization_code', ...appCredentials, code }, { service: serviceB })).body).toEqual(invalid);
      expect((await token({ grant_type: 'authorization_code', ...appCredentials, code: 'nope' })).body).toEqual(invalid);
      // the failed attempts did not use it up
      expect((await token({ grant_type: 'authorization_code', ...appCredentials, code })).status).toBe(200);
    });

    it("puts errors found after the application is known into the redirect URI, earlier ones in the body", async () => {
      const unsupported = await askCode({ response_type: 'magic' });
      expect(unsupported.status).toBe(400);
      expect(params(unsupported.body.redirect_uri)).toEqual({ error: 'unsupported_response_type', error_description: 'Invalid response_type', state: 's1' });
      const wrongRedirect = await askCode({ redirect_uri: 'https://evil.example/' });
      expect(wrongRedirect.body.redirect_uri.startsWith(`${CB}?`)).toBe(true);
      expect(params(wrongRedirect.body.redirect_uri).error).toBe('invalid_request');
      expect((await askCode({ provision_key: 'wrong' })).body).toEqual({ error: 'invalid_provision_key', error_description: 'Invalid provision_key', state: 's1' });
      expect((await askCode({ authenticated_userid: '' })).body.error).toBe('invalid_authenticated_userid');
      expect((await askCode({ client_id: 'nobody' })).body).toEqual({ error: 'invalid_client', error_description: 'Invalid client authentication', state: 's1' });
      const off = await askCode({}, config({ enable_authorization_code: false }));
      expect(params(off.body.redirect_uri).error).toBe('unsupported_response_type');
    });

    describe('PKCE', () => {
      const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
      const spa = { response_type: 'code', client_id: 'spa-id', provision_key: PROVISION, authenticated_userid: 'u', state: 'hello' };
      const codeFor = async (form: Record<string, string>, conf?: OAuth2Config) => params((await authorize(form, {}, conf)).body.redirect_uri);
      const exchange = (form: Record<string, string>, conf?: OAuth2Config) => token({ grant_type: 'authorization_code', ...form }, {}, conf);

      it('fails when code challenge method is not supported (S256 only; s256 is read as S256)', async () => {
        expect(await codeFor({ ...spa, code_challenge: '1234', code_challenge_method: 'foo' })).toEqual({ error: 'invalid_request', error_description: 'code_challenge_method is not supported, must be S256', state: 'hello' });
        expect((await codeFor({ ...spa, code_challenge: '1234', code_challenge_method: 'plain' })).error_description).toBe('code_challenge_method is not supported, must be S256');
        expect((await codeFor({ ...spa, code_challenge: s256(verifier), code_challenge_method: 's256' })).code).toEqual(expect.any(String));
      });

      it('fails when code challenge method is provided without code challenge', async () => {
        expect((await codeFor({ ...spa, code_challenge_method: 'S256' })).error_description).toBe('code_challenge is required when code_method is present');
      });

      it('fails when code challenge is not included for public client', async () => {
        expect((await codeFor(spa)).error_description).toBe('code_challenge is required for public clients');
      });

      it('fails when code challenge is not included for confidential client when conf.pkce is strict', async () => {
        expect((await codeFor({ ...spa, client_id: 'app-id' }, config({ pkce: 'strict' }))).error_description).toBe('code_challenge is required for confidential clients');
      });

      it('returns success when code challenge is not included for public client when conf.pkce is none', async () => {
        expect((await codeFor(spa, config({ pkce: 'none' }))).code).toEqual(expect.any(String));
      });

      it('returns success and saves code challenge', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: '1234', code_challenge_method: 'S256' });
        expect(await store.findCode(tokenDigest(code!))).toMatchObject({ challenge: '1234', challenge_method: 'S256' });
      });

      it('succeeds when using code challenge (a public app with its client_id alone)', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: s256(verifier) });
        expect((await exchange({ client_id: 'spa-id', code: code!, code_verifier: verifier })).status).toBe(200);
      });

      it('succeeds when authorization header used for public app with empty secret', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: s256(verifier) });
        expect((await token({ grant_type: 'authorization_code', code: code!, code_verifier: verifier }, { headers: { authorization: basic('spa-id', '') } })).status).toBe(200);
      });

      it('fails when a secret provided for public app (in the body or in the header)', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: s256(verifier) });
        const disallowed = { error: 'invalid_request', error_description: 'client_secret is disallowed for public clients' };
        const inBody = await exchange({ client_id: 'spa-id', client_secret: 'spa-secret', code: code!, code_verifier: verifier });
        expect([inBody.status, inBody.body]).toEqual([400, disallowed]);
        const inHeader = await token({ grant_type: 'authorization_code', code: code!, code_verifier: verifier }, { headers: { authorization: basic('spa-id', 'spa-secret') } });
        expect([inHeader.status, inHeader.body]).toEqual([400, disallowed]);
        expect((await token({ grant_type: 'refresh_token', client_id: 'spa-id', client_secret: 'spa-secret', refresh_token: 'x' })).body).toEqual(disallowed);
      });

      it('fails when no code_verifier provided for public app', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: s256(verifier) });
        expect((await exchange({ client_id: 'spa-id', code: code! })).body).toEqual({ error: 'invalid_request', error_description: 'code_verifier is required for PKCE authorization requests' });
      });

      it('success when code challenge contains padding, or + or / characters', async () => {
        for (const [v, challenge] of [
          ['abcdelfhigklmnopqrstuvwxyz0123456789abcdefg', '2aC4cMSkAsMRtZbhHhiZkDW3sddRf_iTRGil1r9gi8w='],
          ['abcdelfhigklmnopqrstuvwxyz0123456789abcdefghijklmnop9', '0LoS6Gtrw16r07+ZXsCf8MeAi21QHmKc3LJdUCA5w/o='],
        ] as const) {
          const { code } = await codeFor({ ...spa, code_challenge: challenge });
          expect((await exchange({ client_id: 'spa-id', code: code!, code_verifier: v })).status).toBe(200);
        }
      });

      it('fails when code verifier is greater than 128 characters, less than 43, or empty', async () => {
        const between = { error: 'invalid_request', error_description: 'code_verifier must be between 43 and 128 characters' };
        for (const v of ['abc123'.repeat(30), 'abc123', '']) {
          const { code } = await codeFor({ ...spa, code_challenge: s256(v) });
          expect((await exchange({ client_id: 'spa-id', code: code!, code_verifier: v })).body).toEqual(between);
        }
      });

      it('fails when code verifier is not a string', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: 'abc123' });
        const reply = await endpoint({ json: { grant_type: 'authorization_code', client_id: 'spa-id', code, code_verifier: 12 } });
        expect(reply.body).toEqual({ error: 'invalid_request', error_description: 'code_verifier is not a string' });
      });

      it('fails when code verifier does not match challenge (also for a confidential app when conf.pkce is strict)', async () => {
        const { code } = await codeFor({ ...spa, code_challenge: s256(verifier) });
        expect((await exchange({ client_id: 'spa-id', code: code!, code_verifier: `${verifier}x` })).body).toEqual({ error: 'invalid_grant', error_description: 'Invalid code' });
        const strict = config({ pkce: 'strict' });
        const { code: appCode } = await codeFor({ ...spa, client_id: 'app-id', code_challenge: s256(verifier) }, strict);
        expect((await exchange({ ...appCredentials, code: appCode!, code_verifier: `${verifier}x` }, strict)).body).toEqual({ error: 'invalid_grant', error_description: 'Invalid code' });
      });

      it('fails when no code verifier provided for confidential app with pkce when conf.pkce is lax or none', async () => {
        for (const pkce of ['lax', 'none']) {
          const conf = config({ pkce });
          const { code } = await codeFor({ ...spa, client_id: 'app-id', code_challenge: s256(verifier) }, conf);
          expect((await exchange({ ...appCredentials, code: code! }, conf)).body).toEqual({ error: 'invalid_request', error_description: 'code_verifier is required for PKCE authorization requests' });
        }
      });

      it('fails when no code verifier provided for confidential app when conf.pkce is strict (a code issued without challenge)', async () => {
        const { code } = await codeFor({ ...spa, client_id: 'app-id' });
        expect((await exchange({ ...appCredentials, code: code! }, config({ pkce: 'strict' }))).body).toEqual({ error: 'invalid_request', error_description: 'code_verifier is required for PKCE authorization requests' });
      });

      it('suceeds when no code verifier provided for confidential app without pkce when conf.pkce is none or lax', async () => {
        for (const pkce of ['none', 'lax']) {
          const conf = config({ pkce });
          const { code } = await codeFor({ ...spa, client_id: 'app-id' }, conf);
          expect((await exchange({ ...appCredentials, code: code! }, conf)).status).toBe(200);
        }
      });

      it('success when no code_verifier provided for public app without pkce when conf.pkce is none', async () => {
        const conf = config({ pkce: 'none' });
        const { code } = await codeFor(spa, conf);
        expect((await exchange({ client_id: 'spa-id', code: code! }, conf)).status).toBe(200);
      });
    });
  });

  describe('implicit grant', () => {
    it('returns the token in the redirect URI fragment, without refresh token', async () => {
      const reply = await authorize({ response_type: 'token', client_id: 'app-id', provision_key: PROVISION, authenticated_userid: 'u-9', state: 'st' });
      expect(reply.status).toBe(200);
      const [base, fragment] = reply.body.redirect_uri.split('#');
      expect(base).toBe(CB);
      const args = Object.fromEntries(new URLSearchParams(fragment));
      expect(args).toEqual({ access_token: expect.any(String), expires_in: '7200', state: 'st', token_type: 'bearer' });
      expect((await store.findByAccessDigest(tokenDigest(args.access_token!)))!.authenticated_userid).toBe('u-9');
      const off = await authorize({ response_type: 'token', client_id: 'app-id', provision_key: PROVISION, authenticated_userid: 'u' }, {}, config({ enable_implicit_grant: false }));
      expect(params(off.body.redirect_uri).error).toBe('unsupported_response_type');
    });
  });

  describe('refresh token grant', () => {
    const passwordTokens = async (conf?: OAuth2Config) =>
      (await token({ grant_type: 'password', ...appCredentials, provision_key: PROVISION, authenticated_userid: 'u', scope: 'read' }, {}, conf ?? config({ scopes: ['read'] }))).body;

    it('replaces the token: new access and refresh tokens, the old ones stop working', async () => {
      const first = await passwordTokens();
      const reply = await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token });
      expect(reply.status).toBe(200);
      expect(reply.body.refresh_token).not.toBe(first.refresh_token);
      const renewed = await store.findByAccessDigest(tokenDigest(reply.body.access_token));
      expect(renewed).toMatchObject({ authenticated_userid: 'u', scope: 'read' });
      expect(await store.findByAccessDigest(tokenDigest(first.access_token))).toBeNull();
      expect((await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token })).body).toEqual({
        error: 'invalid_request',
        error_description: 'Invalid refresh_token',
      });
    });

    it('keeps the refresh token with reuse_refresh_token', async () => {
      const reuse = config({ scopes: ['read'], reuse_refresh_token: true });
      const first = await passwordTokens(reuse);
      const second = (await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token }, {}, reuse)).body;
      expect(second.refresh_token).toBe(first.refresh_token);
      const third = await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token }, {}, reuse);
      expect(third.status).toBe(200);
    });

    it('lets only the application that owns the token refresh it, on the same service', async () => {
      const first = await passwordTokens();
      expect((await token({ grant_type: 'refresh_token', client_id: 'other-id', client_secret: 'other-secret', refresh_token: first.refresh_token })).body).toEqual({
        error: 'invalid_client',
        error_description: 'Invalid client authentication',
      });
      expect((await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token }, { service: serviceB })).body.error_description).toBe('Invalid refresh_token');
      expect((await token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token })).status).toBe(200);
    });

    it('gives one new token to two refreshes racing with the same refresh token', async () => {
      const first = await passwordTokens();
      const replies = await Promise.all([1, 2].map(() => token({ grant_type: 'refresh_token', ...appCredentials, refresh_token: first.refresh_token })));
      expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
    });
  });
});

describe('oauth2 access', () => {
  const issue = async (conf = config(), extra: Request = {}) => (await token({ grant_type: 'client_credentials', ...appCredentials, authenticated_userid: 'user-1', provision_key: PROVISION, scope: 'read' }, extra, conf)).body.access_token as string;
  const scoped = config({ scopes: ['read'] });

  it('authenticates a bearer token: consumer, client_id as identifier, scope and user upstream', async () => {
    const accessToken = await issue(scoped);
    const { result, changes } = await access({ headers: { authorization: `Bearer ${accessToken}` } }, scoped);
    expect(result).toEqual({ ok: true, consumer: alice, credential: { id: 'cred-app', identifier: 'app-id', consumerId: alice.id } });
    expect(Object.fromEntries(changes.set)).toEqual({ 'x-authenticated-scope': 'read', 'x-authenticated-userid': 'user-1' });
    // client-sent copies are removed first
    expect(changes.removed).toEqual(['x-authenticated-scope', 'x-authenticated-userid']);
    expect((await access({ headers: { authorization: `token ${accessToken}` } }, scoped)).result.ok).toBe(true);
  });

  it('reads the token from the access_token parameter, query or form body', async () => {
    const accessToken = await issue();
    expect((await access({ query: `access_token=${accessToken}` })).result.ok).toBe(true);
    expect((await access({ method: 'POST', form: { access_token: accessToken, other: '1' } })).result.ok).toBe(true);
  });

  it('uses auth_header_name', async () => {
    const custom = config({ auth_header_name: 'X-Token' });
    const accessToken = await issue(custom);
    expect((await access({ headers: { 'x-token': `Bearer ${accessToken}` } }, custom)).result.ok).toBe(true);
    expect(refusal((await access({ headers: { authorization: `Bearer ${accessToken}` } }, custom)).result)?.status).toBe(401);
  });

  it('works when a correct access_token is being sent in duplicate custom headers (the first one counts)', async () => {
    const custom = config({ auth_header_name: 'custom-header-name' });
    const accessToken = await issue(custom);
    const twice = `bearer ${accessToken}`;
    const request = { headers: { 'custom-header-name': `${twice}, ${twice}` }, rawHeaders: ['custom-header-name', twice, 'custom-header-name', twice] };
    expect((await access(request, custom)).result.ok).toBe(true);
  });

  it('answers 401 invalid_request "The access token is missing" with a Bearer challenge', async () => {
    expect(refusal((await access({})).result)).toEqual({
      status: 401,
      body: { error: 'invalid_request', error_description: 'The access token is missing' },
      headers: { 'www-authenticate': 'Bearer' },
    });
    expect(refusal((await access({}, config({ realm: 'shop' }))).result)?.headers).toEqual({ 'www-authenticate': 'Bearer realm="shop"' });
  });

  it('answers 401 invalid_token for unknown tokens, other schemes and other services', async () => {
    const invalid = {
      status: 401,
      body: { error: 'invalid_token', error_description: 'The access token is invalid or has expired' },
      headers: { 'www-authenticate': 'Bearer error="invalid_token" error_description="The access token is invalid or has expired"' },
    };
    expect(refusal((await access({ headers: { authorization: 'Bearer nope' } })).result)).toEqual(invalid);
    expect(refusal((await access({ headers: { authorization: basic('a', 'b') } })).result)).toEqual(invalid);
    const accessToken = await issue();
    expect(refusal((await access({ headers: { authorization: `Bearer ${accessToken}` }, service: serviceB })).result)).toEqual(invalid);
  });

  it('refuses an expired token and one whose application is gone', async () => {
    const base: OAuth2Token = {
      id: crypto.randomUUID(),
      created_at: now - 100,
      credential: { id: 'cred-app' },
      service: { id: serviceA.id },
      token_type: 'bearer',
      expires_in: 10,
      access_token_digest: tokenDigest('old-token'),
      refresh_token_digest: null,
      authenticated_userid: null,
      scope: null,
      issued_at_ms: Date.now() - 100_000,
      refresh_expires_at_ms: null,
      removed_at_ms: null,
    };
    await store.saveToken(base);
    await store.saveToken({ ...base, id: crypto.randomUUID(), access_token_digest: tokenDigest('forever'), expires_in: 0 });
    await store.saveToken({ ...base, id: crypto.randomUUID(), access_token_digest: tokenDigest('orphan'), expires_in: 0, credential: { id: 'cred-deleted' } });
    expect(refusal((await access({ headers: { authorization: 'Bearer old-token' } })).result)?.status).toBe(401);
    expect((await access({ headers: { authorization: 'Bearer forever' } })).result.ok).toBe(true);
    expect(refusal((await access({ headers: { authorization: 'Bearer orphan' } })).result)?.status).toBe(401);
  });

  it('binds tokens to their service unless global_credentials', async () => {
    const global = config({ global_credentials: true });
    const accessToken = await issue(global);
    expect((await store.findByAccessDigest(tokenDigest(accessToken)))!.service).toBeNull();
    expect((await access({ headers: { authorization: `Bearer ${accessToken}` }, service: serviceB }, global)).result.ok).toBe(true);
    const refused = refusal((await access({ headers: { authorization: `Bearer ${accessToken}` } })).result);
    expect(refused?.body).toEqual({
      error: 'invalid_token',
      error_description: "The access token is global, but the current plugin is configured without 'global_credentials'",
    });
    // responds 401 when using global token against non-global plugin, with Kong's challenge
    expect(refused?.headers).toEqual({ 'www-authenticate': 'Bearer error="invalid_token" error_description="The access token is invalid or has expired"' });
  });

  it('hide_credentials removes the token from the header, the query string or the form body', async () => {
    const hide = config({ hide_credentials: true });
    const accessToken = await issue(hide);
    expect((await access({ headers: { authorization: `Bearer ${accessToken}` } }, hide)).changes.removed).toContain('authorization');
    expect((await access({ query: `access_token=${accessToken}&a=1` }, hide)).changes.removedQuery).toEqual(['access_token']);
    const form = await access({ method: 'POST', form: { a: '1', access_token: accessToken } }, hide);
    expect(form.changes.body).toBe('a=1');
    expect((await access({ headers: { authorization: `Bearer ${accessToken}` } })).changes.removed).not.toContain('authorization');
  });

  it('fails loudly without a token store', async () => {
    const { ctx } = contextFor({ method: 'GET', path: '/x', headers: { authorization: 'Bearer t' } });
    await expect(oauth2.authenticate!({ ...ctx, runtime: {} }, config())).rejects.toThrow(/no token store/);
  });
});
