import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { Snapshot } from '@gatehouse/core';
import { redisTokenStore, type PluginRuntime } from '@gatehouse/plugins';
import { SHARED_REDIS_URL, deleteRedisPrefix, makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, uniqueRedisPrefix, type EchoUpstream } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServerOptions, type DataPlaneServer } from '../src';
import { quietLog, send, type Reply, type SendOptions } from './harness';

const PROVISION = 'the-provision-key';
const CB = 'https://app.example/cb';
const TERMINATED = { 'x-forwarded-proto': 'https' };

/**
 * oauth2 through real data planes and an echo upstream. Two data planes share one token store on the shared Redis (a
 * unique key prefix), one wired with `runtime.redis`, the other with `runtime.oauth2Tokens`: a token issued through
 * either is used through the other. The data planes trust 127.0.0.1 as a proxy, so `X-Forwarded-Proto: https` stands
 * for TLS terminated in front of them; one more data plane serves real HTTPS.
 */
describe('oauth2 through the proxy', () => {
  const prefix = uniqueRedisPrefix('oauth2-dp');
  let echo: EchoUpstream;
  let redisOne: Redis;
  let redisTwo: Redis;
  let snapshot: Snapshot;
  const servers: DataPlaneServer[] = [];
  let one: DataPlaneServer;
  let two: DataPlaneServer;
  let untrusting: DataPlaneServer;

  const alice = makeConsumer({ username: 'alice' });
  const keyUser = makeConsumer({ username: 'key-user' });

  async function startPlane(runtime: PluginRuntime, extra: Partial<DataPlaneServerOptions> = {}): Promise<DataPlaneServer> {
    const dp = await createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, runtime, log: quietLog, trustedIps: ['127.0.0.1'], ...extra });
    servers.push(dp);
    return dp;
  }

  const post = (dp: DataPlaneServer, path: string, form: Record<string, string>, headers: Record<string, string> = TERMINATED): Promise<Reply> =>
    send(dp.port, path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });
  const get = (dp: DataPlaneServer, path: string, options: SendOptions = {}) => send(dp.port, path, options);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const app = { client_id: 'app-id', client_secret: 'app-secret' };
  const codeOf = (reply: Reply) => new URL(reply.json.redirect_uri).searchParams.get('code')!;

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const api = makeService({ name: 'api', url: echo.url });
    const guarded = makeService({ name: 'guarded', url: echo.url });
    const oauthConfig = {
      provision_key: PROVISION,
      enable_authorization_code: true,
      enable_client_credentials: true,
      enable_password_grant: true,
      accept_http_if_already_terminated: true,
      scopes: ['read', 'write'],
    };
    snapshot = makeSnapshot({
      services: [api, guarded],
      routes: [makeRoute({ paths: ['/api'], service: { id: api.id } }), makeRoute({ paths: ['/guarded'], service: { id: guarded.id } })],
      consumers: [alice, keyUser],
      plugins: [
        makePlugin({ name: 'oauth2', service: { id: api.id }, config: oauthConfig }),
        makePlugin({ name: 'oauth2', service: { id: guarded.id }, config: oauthConfig }),
        makePlugin({ name: 'key-auth', service: { id: guarded.id }, config: {} }),
      ],
      credentials: {
        oauth2_credentials: [makeCredential(alice, { name: 'app', client_id: 'app-id', client_secret: 'app-secret', hash_secret: false, redirect_uris: [CB], client_type: 'confidential' })],
        keyauth_credentials: [makeCredential(keyUser, { key: 'the-key' })],
      },
    });
    redisOne = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    redisTwo = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    await Promise.all([redisOne.ping(), redisTwo.ping()]);
    one = await startPlane({ redis: redisOne, redisPrefix: prefix });
    two = await startPlane({ oauth2Tokens: redisTokenStore(redisTwo, prefix) });
    untrusting = await startPlane({ redis: redisOne, redisPrefix: prefix }, { trustedIps: [] });
  });

  afterAll(async () => {
    await Promise.all(servers.map((dp) => dp.close()));
    redisOne?.disconnect();
    redisTwo?.disconnect();
    await echo?.close();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
  });

  it('client credentials: a token issued through one data plane opens the route through the other', async () => {
    const issued = await post(one, '/api/oauth2/token', { grant_type: 'client_credentials', ...app, scope: 'read' });
    expect(issued.status).toBe(200);
    expect(issued.headers['cache-control']).toBe('no-store');
    expect(issued.headers.pragma).toBe('no-cache');
    expect(issued.json).toEqual({ token_type: 'bearer', access_token: expect.any(String), expires_in: 7200 });

    const reply = await get(two, '/api/things', { headers: { ...bearer(issued.json.access_token), 'x-authenticated-userid': 'spoofed' } });
    expect(reply.status).toBe(200);
    expect(reply.json.headers).toMatchObject({ 'x-consumer-id': alice.id, 'x-consumer-username': 'alice', 'x-credential-identifier': 'app-id', 'x-authenticated-scope': 'read' });
    expect(reply.json.headers['x-authenticated-userid']).toBeUndefined();
    expect(reply.json.headers.authorization).toBe(`Bearer ${issued.json.access_token}`);
  });

  it('password grant and refresh across data planes: the refreshed token works everywhere, the old one nowhere', async () => {
    const issued = await post(two, '/api/oauth2/token', { grant_type: 'password', ...app, provision_key: PROVISION, authenticated_userid: 'user-42' });
    expect(issued.status).toBe(200);
    const used = await get(one, `/api/x?access_token=${issued.json.access_token}`);
    expect(used.json.headers['x-authenticated-userid']).toBe('user-42');

    const refreshed = await post(one, '/api/oauth2/token', { grant_type: 'refresh_token', ...app, refresh_token: issued.json.refresh_token });
    expect(refreshed.status).toBe(200);
    expect((await get(two, '/api/x', { headers: bearer(refreshed.json.access_token) })).status).toBe(200);
    const old = await get(two, '/api/x', { headers: bearer(issued.json.access_token) });
    expect(old.status).toBe(401);
    expect(old.json).toEqual({ error: 'invalid_token', error_description: 'The access token is invalid or has expired' });
    expect((await post(two, '/api/oauth2/token', { grant_type: 'refresh_token', ...app, refresh_token: issued.json.refresh_token })).json.error_description).toBe('Invalid refresh_token');
  });

  it('authorization code with PKCE: authorized through one data plane, exchanged through the other, once', async () => {
    const verifier = 'a-long-random-verifier-of-the-client-0123456789';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorized = await post(one, '/api/oauth2/authorize', {
      response_type: 'code',
      client_id: 'app-id',
      provision_key: PROVISION,
      authenticated_userid: 'user-7',
      scope: 'read write',
      state: 'st-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(authorized.status).toBe(200);
    expect(authorized.json.redirect_uri).toMatch(/^https:\/\/app\.example\/cb\?code=\w{32}&state=st-1$/);
    const code = codeOf(authorized);

    const noVerifier = await post(two, '/api/oauth2/token', { grant_type: 'authorization_code', ...app, code });
    expect(noVerifier.json.error_description).toBe('code_verifier is required for PKCE authorization requests');
    const exchanged = await post(two, '/api/oauth2/token', { grant_type: 'authorization_code', ...app, code, code_verifier: verifier });
    expect(exchanged.status).toBe(200);
    expect(exchanged.json.refresh_token).toBeDefined();
    const again = await post(one, '/api/oauth2/token', { grant_type: 'authorization_code', ...app, code, code_verifier: verifier });
    expect(again.json).toEqual({ error: 'invalid_request', error_description: 'Invalid code' });

    const reply = await get(one, '/api/x', { headers: bearer(exchanged.json.access_token) });
    expect(reply.json.headers).toMatchObject({ 'x-authenticated-userid': 'user-7', 'x-authenticated-scope': 'read write' });
  });

  it('authenticates the client with a Basic header, answering a bad one with 401 and a Basic challenge', async () => {
    const basic = (secret: string) => `Basic ${Buffer.from(`app-id:${secret}`).toString('base64')}`;
    expect((await post(one, '/api/oauth2/token', { grant_type: 'client_credentials' }, { ...TERMINATED, authorization: basic('app-secret') })).status).toBe(200);
    const bad = await post(one, '/api/oauth2/token', { grant_type: 'client_credentials' }, { ...TERMINATED, authorization: basic('nope') });
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toBe('Basic realm="OAuth2.0"');
    expect(bad.json).toEqual({ error: 'invalid_client', error_description: 'Invalid client authentication' });
  });

  describe('HTTPS rule', () => {
    it('refuses the endpoints over plain HTTP, and believes X-Forwarded-Proto only from a trusted proxy', async () => {
      const plain = await post(one, '/api/oauth2/token', { grant_type: 'client_credentials', ...app }, {});
      expect(plain.status).toBe(400);
      expect(plain.json).toEqual({ error: 'access_denied', error_description: 'You must use HTTPS' });
      const spoofed = await post(untrusting, '/api/oauth2/token', { grant_type: 'client_credentials', ...app });
      expect(spoofed.json).toEqual({ error: 'access_denied', error_description: 'You must use HTTPS' });
      const twice = await send(one.port, '/api/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': ['https', 'https'] },
        body: new URLSearchParams({ grant_type: 'client_credentials', ...app }).toString(),
      });
      expect(twice.json).toEqual({ error: 'access_denied', error_description: 'Only one X-Forwarded-Proto header allowed' });
    });

    it('answers GET on the endpoints with 405 invalid_method', async () => {
      const reply = await get(one, '/api/oauth2/token', { headers: TERMINATED });
      expect(reply.status).toBe(405);
      expect(reply.json).toEqual({ error: 'invalid_method', error_description: 'The HTTP method GET is invalid for the token endpoint' });
    });

    it('serves the endpoints on a data plane listening with TLS', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-oauth2-tls-'));
      try {
        execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
        const secure = await startPlane({ redis: redisOne, redisPrefix: prefix }, { tls: { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, trustedIps: [] });
        const body = new URLSearchParams({ grant_type: 'client_credentials', ...app }).toString();
        const reply = await new Promise<{ status: number; json: any }>((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port: secure.port, path: '/api/oauth2/token', method: 'POST', rejectUnauthorized: false, agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        expect(reply.status).toBe(200);
        // and the token works through a plain data plane sharing the store
        expect((await get(two, '/api/x', { headers: bearer(reply.json.access_token) })).status).toBe(200);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('answers a request without token 401 invalid_request with a Bearer challenge, nothing reaching the upstream', async () => {
    const seen = echo.received.length;
    const reply = await get(one, '/api/x');
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid_request', error_description: 'The access token is missing' });
    expect(reply.headers['www-authenticate']).toBe('Bearer');
    expect(echo.received.length).toBe(seen);
  });

  it('refuses a token issued for another service', async () => {
    const issued = await post(one, '/api/oauth2/token', { grant_type: 'client_credentials', ...app });
    const reply = await get(two, '/guarded/x', { headers: { ...bearer(issued.json.access_token), apikey: 'the-key' } });
    expect(reply.status).toBe(401);
    expect(reply.json.error).toBe('invalid_token');
  });

  describe('under AND with key-auth (rule 4)', () => {
    it('answers the token endpoint only after key-auth authenticated the request', async () => {
      const withoutKey = await post(one, '/guarded/oauth2/token', { grant_type: 'client_credentials', ...app });
      expect(withoutKey.status).toBe(403);
      expect(withoutKey.json).toEqual({ message: 'No API key found in headers or querystring' });
      const badKey = await post(one, '/guarded/oauth2/token', { grant_type: 'client_credentials', ...app }, { ...TERMINATED, apikey: 'wrong' });
      expect(badKey.status).toBe(401);
      const withKey = await post(one, '/guarded/oauth2/token', { grant_type: 'client_credentials', ...app }, { ...TERMINATED, apikey: 'the-key' });
      expect(withKey.status).toBe(200);
      expect(withKey.json.access_token).toBeDefined();
    });

    it('answers the authorize endpoint only after key-auth authenticated the request', async () => {
      const form = { response_type: 'code', client_id: 'app-id', provision_key: PROVISION, authenticated_userid: 'u' };
      expect((await post(two, '/guarded/oauth2/authorize', form)).status).toBe(403);
      const authorized = await post(two, '/guarded/oauth2/authorize', form, { ...TERMINATED, apikey: 'the-key' });
      expect(authorized.status).toBe(200);
      expect(codeOf(authorized)).toMatch(/^\w{32}$/);
    });

    it('needs both credentials on the proxied route; key-auth, running last, sets the consumer', async () => {
      const issued = await post(one, '/guarded/oauth2/token', { grant_type: 'client_credentials', ...app, scope: 'write' }, { ...TERMINATED, apikey: 'the-key' });
      const tokenOnly = await get(two, '/guarded/x', { headers: bearer(issued.json.access_token) });
      expect(tokenOnly.status).toBe(403);
      const keyOnly = await get(two, '/guarded/x', { headers: { apikey: 'the-key' } });
      expect(keyOnly.status).toBe(401);
      expect(keyOnly.json.error_description).toBe('The access token is missing');
      const both = await get(two, '/guarded/x', { headers: { ...bearer(issued.json.access_token), apikey: 'the-key' } });
      expect(both.status).toBe(200);
      expect(both.json.headers).toMatchObject({ 'x-consumer-id': keyUser.id, 'x-authenticated-scope': 'write' });
    });
  });
});
