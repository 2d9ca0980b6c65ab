import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { Plugin } from '@gatehouse/core';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { startDataPlane, type RunningDataPlane } from './harness';

const HS_SECRET = 'jwt-shared-secret';
const HMAC_SECRET = 'hmac-shared-secret';

/**
 * jwt (priority 1450), key-auth (1250), hmac-auth (1030) and acl (950) through the real proxy, alone and combined:
 * each test loads the plugin configuration it needs.
 */
describe('jwt, hmac-auth and acl through the proxy', () => {
  let echo: EchoUpstream;
  let gw: RunningDataPlane;
  let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
  const jwtUser = makeConsumer({ username: 'jwt-user', custom_id: 'j-1' });
  const rsaUser = makeConsumer({ username: 'rsa-user' });
  const hmacUser = makeConsumer({ username: 'hmac-user' });
  const keyUser = makeConsumer({ username: 'key-user' });
  const anonymous = makeConsumer({ username: 'anonymous' });
  let service: ReturnType<typeof makeService>;
  let route: ReturnType<typeof makeRoute>;
  let credentials: Record<string, Array<ReturnType<typeof makeCredential>>>;

  const load = (plugins: Plugin[]) =>
    gw.load(makeSnapshot({ services: [service], routes: [route], consumers: [jwtUser, rsaUser, hmacUser, keyUser, anonymous], plugins, credentials }));
  const plugin = (name: string, config: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) =>
    makePlugin({ name, service: { id: service.id }, config, ...fields });

  const hsToken = (claims: JWTPayload = {}, secret = HS_SECRET) =>
    new SignJWT({ iss: 'jwt-key', ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

  /** The signature a client computes over `date` and the request line. */
  const hmacAuthorization = (method: string, target: string, date: string, extra: Array<[string, string]> = []) => {
    const names = ['date', ...extra.map(([n]) => n), 'request-line'];
    const lines = [`date: ${date}`, ...extra.map(([n, v]) => `${n}: ${v}`), `${method} ${target} HTTP/1.1`];
    const signature = createHmac('sha256', HMAC_SECRET).update(lines.join('\n')).digest('base64');
    return `hmac username="hmac-login", algorithm="hmac-sha256", headers="${names.join(' ')}", signature="${signature}"`;
  };

  beforeAll(async () => {
    echo = await startEchoUpstream();
    service = makeService({ name: 'api', url: echo.url });
    route = makeRoute({ paths: ['/api'], service: { id: service.id } });
    rsa = await generateKeyPair('RS256');
    credentials = {
      jwt_secrets: [
        makeCredential(jwtUser, { key: 'jwt-key', secret: HS_SECRET, algorithm: 'HS256', rsa_public_key: null }),
        makeCredential(rsaUser, { key: 'rsa-key', secret: 'unused', algorithm: 'RS256', rsa_public_key: await exportSPKI(rsa.publicKey) }),
      ],
      hmacauth_credentials: [makeCredential(hmacUser, { username: 'hmac-login', secret: HMAC_SECRET })],
      keyauth_credentials: [makeCredential(keyUser, { key: 'the-key' })],
      acls: [
        // x-consumer-groups lists the groups in the order of their ACL rows' ids
        makeCredential(jwtUser, { id: 'a0000000-0000-4000-8000-000000000001', group: 'admin' }),
        makeCredential(jwtUser, { id: 'a0000000-0000-4000-8000-000000000002', group: 'staff' }),
        makeCredential(hmacUser, { group: 'partners' }),
        makeCredential(anonymous, { group: 'public' }),
      ],
    };
    gw = await startDataPlane(null);
  });

  afterAll(async () => {
    await gw.close();
    await echo.close();
  });

  describe('jwt', () => {
    it('forwards an authenticated request with the consumer and the credential key', async () => {
      load([plugin('jwt')]);
      const reply = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}`, 'x-credential-identifier': 'spoof' } });
      expect(reply.status).toBe(200);
      expect(reply.json.headers).toMatchObject({ 'x-consumer-id': jwtUser.id, 'x-consumer-username': 'jwt-user', 'x-consumer-custom-id': 'j-1', 'x-credential-identifier': 'jwt-key' });
      expect(reply.json.headers['x-anonymous-consumer']).toBeUndefined();
    });

    it("answers Kong's 401s, and nothing reaches the upstream", async () => {
      load([plugin('jwt', { claims_to_verify: ['exp'] })]);
      const upstreamSeen = echo.received.length;
      const missing = await gw.send('/api');
      expect(missing.status).toBe(401);
      expect(missing.json).toEqual({ message: 'Unauthorized' });
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      const expired = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken({ exp: Math.floor(Date.now() / 1000) - 5 })}` } });
      expect(expired.status).toBe(401);
      expect(expired.json).toEqual({ exp: 'token expired' });
      expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      const forged = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken({ exp: Math.floor(Date.now() / 1000) + 60 }, 'guess')}` } });
      expect(forged.status).toBe(401);
      expect(forged.json).toEqual({ message: 'Invalid signature' });
      expect(echo.received.length).toBe(upstreamSeen);
    });

    it('verifies RS256 with the public key and refuses an HS256 token made from that key', async () => {
      load([plugin('jwt')]);
      const token = await new SignJWT({ iss: 'rsa-key' }).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
      const good = await gw.send('/api', { headers: { authorization: `Bearer ${token}` } });
      expect(good.status).toBe(200);
      expect(good.json.headers['x-consumer-id']).toBe(rsaUser.id);
      const pem = await exportSPKI(rsa.publicKey);
      const confused = await new SignJWT({ iss: 'rsa-key' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(pem));
      const refused = await gw.send('/api', { headers: { authorization: `Bearer ${confused}` } });
      expect(refused.status).toBe(401);
      expect(refused.json).toEqual({ message: 'Invalid algorithm' });
    });

    it('reads the token from the query string too, and refuses two different tokens', async () => {
      load([plugin('jwt')]);
      const token = await hsToken();
      expect((await gw.send(`/api?jwt=${token}`)).status).toBe(200);
      const two = await gw.send(`/api?jwt=${token}`, { headers: { authorization: `Bearer ${await hsToken({ sub: 'other' })}` } });
      expect(two.status).toBe(401);
      expect(two.json).toEqual({ message: 'Multiple tokens provided' });
    });
  });

  describe('hmac-auth', () => {
    it('authenticates a signed request line with its raw query, the username as identifier', async () => {
      load([plugin('hmac-auth')]);
      const date = new Date().toUTCString();
      const target = '/api/orders?b=2&a=%20x';
      const reply = await gw.send(target, { headers: { date, authorization: hmacAuthorization('GET', target, date) } });
      expect(reply.status).toBe(200);
      expect(reply.json.headers).toMatchObject({ 'x-consumer-id': hmacUser.id, 'x-credential-identifier': 'hmac-login' });
      const tampered = await gw.send('/api/orders?b=3&a=%20x', { headers: { date, authorization: hmacAuthorization('GET', target, date) } });
      expect(tampered.status).toBe(401);
      expect(tampered.json).toEqual({ message: 'HMAC signature does not match' });
    });

    it('refuses a stale date, and hides the credentials when asked', async () => {
      load([plugin('hmac-auth', { hide_credentials: true })]);
      const stale = new Date(Date.now() - 600_000).toUTCString();
      const old = await gw.send('/api', { headers: { date: stale, authorization: hmacAuthorization('GET', '/api', stale) } });
      expect(old.status).toBe(401);
      expect(old.json).toEqual({ message: 'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication' });
      const date = new Date().toUTCString();
      const fresh = await gw.send('/api', { headers: { date, authorization: hmacAuthorization('GET', '/api', date) } });
      expect(fresh.status).toBe(200);
      expect(fresh.json.headers.authorization).toBeUndefined();
    });

    it('checks the body against its Digest and still forwards the body', async () => {
      load([plugin('hmac-auth', { validate_request_body: true })]);
      const body = '{"amount":10}';
      const digest = `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
      const date = new Date().toUTCString();
      const authorization = hmacAuthorization('POST', '/api', date, [['digest', digest]]);
      const headers = { date, digest, authorization, 'content-type': 'application/json' };
      const reply = await gw.send('/api', { method: 'POST', headers, body });
      expect(reply.status).toBe(200);
      expect(reply.json.body).toBe(body);
      const changed = await gw.send('/api', { method: 'POST', headers, body: '{"amount":1000}' });
      expect(changed.status).toBe(401);
      expect(changed.json).toEqual({ message: 'HMAC signature does not match' });
    });
  });

  describe('acl', () => {
    it('lets members through with x-consumer-groups and refuses others with 403', async () => {
      load([plugin('jwt'), plugin('acl', { allow: ['admin'] })]);
      const member = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}`, 'x-consumer-groups': 'spoofed' } });
      expect(member.status).toBe(200);
      expect(member.json.headers['x-consumer-groups']).toBe('admin, staff');
      load([plugin('jwt'), plugin('acl', { deny: ['staff'] })]);
      const denied = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}` } });
      expect(denied.status).toBe(403);
      expect(denied.json).toEqual({ message: 'You cannot consume this service' });
    });

    it('hides the groups header, the client copy included', async () => {
      load([plugin('jwt'), plugin('acl', { allow: ['admin'], hide_groups_header: true })]);
      const reply = await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}`, 'x-consumer-groups': 'spoofed' } });
      expect(reply.status).toBe(200);
      expect(reply.json.headers['x-consumer-groups']).toBeUndefined();
    });

    it('answers 401 when no authentication plugin identified anybody', async () => {
      load([plugin('acl', { allow: ['admin'] })]);
      const reply = await gw.send('/api');
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ message: 'Unauthorized' });
    });

    it("applies to the anonymous consumer's groups", async () => {
      load([plugin('jwt', { anonymous: anonymous.id }), plugin('acl', { allow: ['admin', 'public'] })]);
      const anon = await gw.send('/api');
      expect(anon.status).toBe(200);
      expect(anon.json.headers).toMatchObject({ 'x-consumer-id': anonymous.id, 'x-anonymous-consumer': 'true', 'x-consumer-groups': 'public' });
      load([plugin('jwt', { anonymous: anonymous.id }), plugin('acl', { allow: ['admin'] })]);
      expect((await gw.send('/api')).status).toBe(403);
      expect((await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}` } })).status).toBe(200);
    });

    it('scoped to a consumer, it applies to that consumer only', async () => {
      load([
        plugin('jwt', { anonymous: anonymous.id }),
        plugin('key-auth', { anonymous: anonymous.id }),
        makePlugin({ name: 'acl', consumer: { id: keyUser.id }, config: { allow: ['admin'] } }),
      ]);
      expect((await gw.send('/api', { headers: { apikey: 'the-key' } })).status).toBe(403);
      expect((await gw.send('/api', { headers: { authorization: `Bearer ${await hsToken()}` } })).status).toBe(200);
      expect((await gw.send('/api')).status).toBe(200);
    });
  });

  describe('three authentication plugins at once', () => {
    const date = () => new Date().toUTCString();

    it('AND: all three credentials needed; hmac-auth, running last, sets the upstream consumer', async () => {
      load([plugin('jwt'), plugin('key-auth'), plugin('hmac-auth')]);
      const d = date();
      // jwt runs first: without a token it answers, whatever else is valid
      const noJwt = await gw.send('/api', { headers: { authorization: hmacAuthorization('GET', '/api', d), date: d, apikey: 'the-key' } });
      expect(noJwt.status).toBe(401);
      expect(noJwt.headers['www-authenticate']).toBe('Bearer');
      // Authorization carries the hmac signature, so the token travels in the query string
      const token = await hsToken();
      const both = await gw.send(`/api?jwt=${token}`, { headers: { authorization: hmacAuthorization('GET', `/api?jwt=${token}`, d), date: d, apikey: 'the-key' } });
      expect(both.status).toBe(200);
      expect(both.json.headers).toMatchObject({ 'x-consumer-id': hmacUser.id, 'x-credential-identifier': 'hmac-login' });
      const noKey = await gw.send(`/api?jwt=${token}`, { headers: { authorization: hmacAuthorization('GET', `/api?jwt=${token}`, d), date: d } });
      expect(noKey.status).toBe(403);
      const noHmac = await gw.send(`/api?jwt=${token}`, { headers: { apikey: 'the-key' } });
      expect(noHmac.status).toBe(401);
      expect(noHmac.json).toEqual({ message: 'Unauthorized' });
    });

    it('OR: the first plugin that authenticates wins, and nobody → the anonymous consumer', async () => {
      const anon = { anonymous: anonymous.id };
      load([plugin('jwt', anon), plugin('key-auth', anon), plugin('hmac-auth', anon)]);
      const token = await hsToken();
      const jwtAndKey = await gw.send(`/api?jwt=${token}`, { headers: { apikey: 'the-key' } });
      expect(jwtAndKey.json.headers['x-consumer-id']).toBe(jwtUser.id);
      const d = date();
      const onlyHmac = await gw.send('/api', { headers: { authorization: hmacAuthorization('GET', '/api', d), date: d } });
      expect(onlyHmac.json.headers).toMatchObject({ 'x-consumer-id': hmacUser.id, 'x-credential-identifier': 'hmac-login' });
      expect(onlyHmac.json.headers['x-anonymous-consumer']).toBeUndefined();
      const nobody = await gw.send('/api', { headers: { authorization: 'Bearer not.a.token' } });
      expect(nobody.status).toBe(200);
      expect(nobody.json.headers).toMatchObject({ 'x-consumer-id': anonymous.id, 'x-anonymous-consumer': 'true' });
    });
  });
});
