// The interface document's "Multiple authentication plugins on one service, API or route": each rule proxied through
// real processes in both topologies, with key-auth (priority 1250) + basic-auth (1100), and jwt (1450) as a third.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { basicAuth, cleanUp } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const JWT_SECRET = 'carol-jwt-secret-0123456789abcdef';

async function carolToken(): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('carol-iss').sign(new TextEncoder().encode(JWT_SECRET));
}

describe.each(TOPOLOGIES)('multiple authentication plugins (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  const ids: Record<string, string> = {};
  let jwtToken: string;

  // alice: key-auth; bob: basic-auth; carol: jwt. Each credential belongs to another consumer, so the consumer the
  // upstream sees tells which plugin set it.
  const ALICE_KEY = { apikey: 'alice-key' };
  const BOB_BASIC = { authorization: basicAuth('bob-login', 'bob-password') };

  const get = (dp: number, path: string, headers: Record<string, string> = {}) =>
    proxied(`${topology.dataPlanes[dp]!.proxyUrl}${path}`, { headers });
  /** the same request through every data plane */
  const everywhere = async (path: string, headers: Record<string, string> = {}) => {
    const answers = await Promise.all(topology.dataPlanes.map((_, i) => get(i, path, headers)));
    for (const answer of answers.slice(1)) {
      expect({ status: answer.status, consumer: answer.body?.headers?.['x-consumer-id'] ?? null }).toEqual({
        status: answers[0]!.status,
        consumer: answers[0]!.body?.headers?.['x-consumer-id'] ?? null,
      });
    }
    return answers[0]!;
  };

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** a service + route on `path` with the given plugins (name → config form fields) */
  async function protectedRoute(label: string, plugins: Array<[string, Record<string, string>]>) {
    await created('/services/', { name: label, url: `${upstream.url}/${label}` });
    await created(`/services/${label}/routes`, { name: label, 'paths[]': `/${label}` });
    for (const [plugin, config] of plugins) await created(`/services/${label}/plugins/`, { name: plugin, ...config });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    // the proxy trusts the test client as a TLS terminator, so oauth2's endpoints (HTTPS only) can be reached with
    // `X-Forwarded-Proto: https` and `accept_http_if_already_terminated`
    topology = await startTopology(name, { env: { GATEHOUSE_TRUSTED_IPS: '127.0.0.1' } });
    admin = adminClient(topology.adminUrl);

    for (const username of ['alice', 'bob', 'carol', 'dan', 'anonymous_key', 'anonymous_basic', 'anonymous_jwt', 'anonymous_blocked', 'anonymous_deleted']) {
      ids[username] = (await created('/consumers/', { username })).id;
    }
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/consumers/bob/basic-auth', { username: 'bob-login', password: 'bob-password' });
    await created('/consumers/carol/jwt', { key: 'carol-iss', secret: JWT_SECRET });
    jwtToken = await carolToken();
    await created('/consumers/dan/oauth2', { name: 'dan-app', client_id: 'dan-client', client_secret: 'dan-secret' });

    const anon = (consumer: string) => ({ 'config.anonymous': ids[consumer]! });
    await protectedRoute('and', [['key-auth', {}], ['basic-auth', {}]]);
    await protectedRoute('or', [['key-auth', anon('anonymous_key')], ['basic-auth', anon('anonymous_basic')]]);
    await protectedRoute('and3', [['jwt', {}], ['key-auth', {}], ['basic-auth', {}]]);
    await protectedRoute('or3', [['jwt', anon('anonymous_jwt')], ['key-auth', anon('anonymous_key')], ['basic-auth', anon('anonymous_basic')]]);
    await protectedRoute('orblocked', [['key-auth', anon('anonymous_blocked')], ['basic-auth', anon('anonymous_blocked')]]);
    // rule 5: request-termination configured on the anonymous consumer
    await created('/consumers/anonymous_blocked/plugins', { name: 'request-termination', 'config.status_code': '401', 'config.message': 'Anonymous access is not allowed' });
    await protectedRoute('mixedkeyanon', [['key-auth', anon('anonymous_key')], ['basic-auth', {}]]);
    await protectedRoute('mixedbasicanon', [['key-auth', {}], ['basic-auth', anon('anonymous_basic')]]);
    await protectedRoute('andoauth', [['oauth2', { 'config.enable_client_credentials': 'true', 'config.accept_http_if_already_terminated': 'true' }], ['key-auth', {}]]);
    const missing = randomUUID();
    await protectedRoute('dangling', [['key-auth', { 'config.anonymous': missing }], ['basic-auth', { 'config.anonymous': missing }]]);
    await protectedRoute('deletedanon', [['key-auth', anon('anonymous_deleted')], ['basic-auth', anon('anonymous_deleted')]]);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  describe('rule 1: all plugins or none configured for anonymous access; a mixed configuration is deterministic', () => {
    it('all configured (OR) never answers 40x; none configured (AND) answers 40x without credentials', async () => {
      expect((await everywhere('/or')).status).toBe(200);
      expect((await everywhere('/and')).status).toBe(403);
    });

    it('key-auth with anonymous + basic-auth without: basic-auth always demands its own credential', async () => {
      // key-auth falls back to the anonymous consumer, then basic-auth refuses
      const none = await everywhere('/mixedkeyanon');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ message: 'Unauthorized' });
      expect(none.headers.get('www-authenticate')).toBe('Basic realm="service"');
      // a valid key does not spare the basic-auth check
      expect((await everywhere('/mixedkeyanon', ALICE_KEY)).status).toBe(401);
      // a valid basic credential alone: key-auth fell back to anonymous, basic-auth replaced it
      const basicOnly = await everywhere('/mixedkeyanon', BOB_BASIC);
      expect(basicOnly.status).toBe(200);
      expect(basicOnly.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(basicOnly.body.headers['x-anonymous-consumer']).toBeUndefined();
      // both valid: basic-auth, which runs last, sets the consumer
      const both = await everywhere('/mixedkeyanon', { ...ALICE_KEY, ...BOB_BASIC });
      expect(both.body.headers['x-consumer-id']).toBe(ids.bob);
    });

    it('key-auth without anonymous + basic-auth with: the key is required, and once it authenticates basic-auth is skipped', async () => {
      const none = await everywhere('/mixedbasicanon');
      expect(none.status).toBe(403);
      expect(none.body).toEqual({ message: 'No API key found in headers or querystring' });
      expect((await everywhere('/mixedbasicanon', BOB_BASIC)).status).toBe(403);
      const keyOnly = await everywhere('/mixedbasicanon', ALICE_KEY);
      expect(keyOnly.status).toBe(200);
      expect(keyOnly.body.headers['x-consumer-id']).toBe(ids.alice);
      const both = await everywhere('/mixedbasicanon', { ...ALICE_KEY, ...BOB_BASIC });
      expect(both.body.headers['x-consumer-id']).toBe(ids.alice);
      expect(both.body.headers['x-credential-identifier']).not.toBe('bob-login');
    });
  });

  describe('rule 2: with AND, the last plugin executed sets the credentials passed upstream', () => {
    it('both valid: basic-auth (lower priority, runs last) sets the consumer and credential', async () => {
      const res = await everywhere('/and/x', { ...ALICE_KEY, ...BOB_BASIC });
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/and/x');
      expect(res.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(res.body.headers['x-consumer-username']).toBe('bob');
      expect(res.body.headers['x-credential-identifier']).toBe('bob-login');
      expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
    });

    it('one credential missing or wrong: the first failing plugin (by priority) answers with its own 40x', async () => {
      const keyMissing = await everywhere('/and', BOB_BASIC);
      expect(keyMissing.status).toBe(403);
      expect(keyMissing.body).toEqual({ message: 'No API key found in headers or querystring' });

      const basicMissing = await everywhere('/and', ALICE_KEY);
      expect(basicMissing.status).toBe(401);
      expect(basicMissing.body).toEqual({ message: 'Unauthorized' });
      expect(basicMissing.headers.get('www-authenticate')).toBe('Basic realm="service"');

      const wrongKey = await everywhere('/and', { apikey: 'not-a-key', ...BOB_BASIC });
      expect(wrongKey.status).toBe(401);
      expect(wrongKey.body).toEqual({ message: 'Invalid authentication credentials' });

      const wrongPassword = await everywhere('/and', { ...ALICE_KEY, authorization: basicAuth('bob-login', 'nope') });
      expect(wrongPassword.status).toBe(401);
      expect(wrongPassword.body).toEqual({ message: 'Unauthorized' });

      const nothing = await everywhere('/and');
      expect(nothing.status).toBe(403);
      expect(upstream.received.filter((r) => r.path.startsWith('/and') && r.headers['x-consumer-id'] !== ids.bob)).toEqual([]);
    });

    it('three plugins (jwt + key-auth + basic-auth): all must pass, the last one (basic-auth) wins', async () => {
      const all = await everywhere(`/and3?jwt=${jwtToken}`, { ...ALICE_KEY, ...BOB_BASIC });
      expect(all.status).toBe(200);
      expect(all.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(all.body.headers['x-credential-identifier']).toBe('bob-login');

      const noJwt = await everywhere('/and3', { ...ALICE_KEY, ...BOB_BASIC });
      expect(noJwt.status).toBe(401);
      expect(noJwt.body).toEqual({ message: 'Unauthorized' });
      const noKey = await everywhere(`/and3?jwt=${jwtToken}`, BOB_BASIC);
      expect(noKey.status).toBe(403);
      const noBasic = await everywhere(`/and3?jwt=${jwtToken}`, ALICE_KEY);
      expect(noBasic.status).toBe(401);
      expect(noBasic.headers.get('www-authenticate')).toBe('Basic realm="service"');
    });
  });

  describe('rule 3: with OR, the first plugin that authenticates wins; if none does, the last plugin\'s anonymous consumer', () => {
    it('both valid: key-auth (higher priority) authenticates first and basic-auth is skipped', async () => {
      const res = await everywhere('/or', { ...ALICE_KEY, ...BOB_BASIC });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-consumer-id']).toBe(ids.alice);
      expect(res.body.headers['x-consumer-username']).toBe('alice');
      expect(res.body.headers['x-credential-identifier']).toBeDefined();
      expect(res.body.headers['x-credential-identifier']).not.toBe('bob-login');
      expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
    });

    it('only the lower-priority credential valid: it replaces the anonymous fallback of the plugin before it', async () => {
      const res = await everywhere('/or', { apikey: 'wrong', ...BOB_BASIC });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(res.body.headers['x-credential-identifier']).toBe('bob-login');
      expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
    });

    it('none valid: the anonymous consumer of the LAST plugin, with x-anonymous-consumer: true and no credential', async () => {
      for (const headers of [{}, { apikey: 'wrong' }, { apikey: 'wrong', authorization: basicAuth('bob-login', 'wrong') }] as Array<Record<string, string>>) {
        const res = await everywhere('/or', headers);
        expect(res.status).toBe(200);
        expect(res.body.headers['x-consumer-id']).toBe(ids.anonymous_basic);
        expect(res.body.headers['x-consumer-username']).toBe('anonymous_basic');
        expect(res.body.headers['x-anonymous-consumer']).toBe('true');
        expect(res.body.headers['x-credential-identifier']).toBeUndefined();
      }
    });

    it('three plugins (jwt + key-auth + basic-auth): first to authenticate wins, else the last one\'s anonymous', async () => {
      const jwtAndKey = await everywhere(`/or3?jwt=${jwtToken}`, { ...ALICE_KEY, ...BOB_BASIC });
      expect(jwtAndKey.body.headers['x-consumer-id']).toBe(ids.carol);
      expect(jwtAndKey.body.headers['x-credential-identifier']).toBe('carol-iss');
      const keyAndBasic = await everywhere('/or3', { ...ALICE_KEY, ...BOB_BASIC });
      expect(keyAndBasic.body.headers['x-consumer-id']).toBe(ids.alice);
      const basicOnly = await everywhere('/or3?jwt=not.a.token', BOB_BASIC);
      expect(basicOnly.status).toBe(200);
      expect(basicOnly.body.headers['x-consumer-id']).toBe(ids.bob);
      const none = await everywhere('/or3');
      expect(none.status).toBe(200);
      expect(none.body.headers['x-consumer-id']).toBe(ids.anonymous_basic);
      expect(none.body.headers['x-anonymous-consumer']).toBe('true');
    });
  });

  describe('rule 4: with oauth2 in AND, its token endpoint also requires the other plugins\' authentication', () => {
    const tokenRequest = (headers: Record<string, string>) =>
      proxied(`${topology.proxyUrl}/andoauth/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https', ...headers },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'dan-client', client_secret: 'dan-secret' }).toString(),
      });

    it('a token request without the key is refused by key-auth, although oauth2 runs first by priority', async () => {
      const res = await tokenRequest({});
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'No API key found in headers or querystring' });
      const wrongKey = await tokenRequest({ apikey: 'wrong' });
      expect(wrongKey.status).toBe(401);
      expect(wrongKey.body.access_token).toBeUndefined();
    });

    it('with the key the token is issued, and both credentials are needed on the route; key-auth runs last and wins', async () => {
      const issued = await tokenRequest(ALICE_KEY);
      expect(issued.status).toBe(200);
      expect(issued.body).toMatchObject({ token_type: 'bearer', expires_in: 7200 });
      expect(typeof issued.body.access_token).toBe('string');
      const bearer = { authorization: `Bearer ${issued.body.access_token}` };

      const both = await everywhere('/andoauth/x', { ...bearer, ...ALICE_KEY });
      expect(both.status).toBe(200);
      expect(both.body.headers['x-consumer-id']).toBe(ids.alice);
      const tokenOnly = await everywhere('/andoauth/x', bearer);
      expect(tokenOnly.status).toBe(403);
      const keyOnly = await everywhere('/andoauth/x', ALICE_KEY);
      expect(keyOnly.status).toBe(401);
      expect(keyOnly.body).toEqual({ error: 'invalid_request', error_description: 'The access token is missing' });
    });
  });

  describe('rule 5: OR with anonymous access forbidden needs request-termination on the anonymous consumer', () => {
    it('blocks the requests that fell back to the anonymous consumer, and only those', async () => {
      const anonymous = await everywhere('/orblocked');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'Anonymous access is not allowed' });
      const invalid = await everywhere('/orblocked', { apikey: 'wrong', authorization: basicAuth('bob-login', 'wrong') });
      expect(invalid.status).toBe(401);
      expect(invalid.body).toEqual({ message: 'Anonymous access is not allowed' });
      expect(upstream.received.filter((r) => r.path.startsWith('/orblocked'))).toEqual([]);

      const viaKey = await everywhere('/orblocked', ALICE_KEY);
      expect(viaKey.status).toBe(200);
      expect(viaKey.body.headers['x-consumer-id']).toBe(ids.alice);
      const viaBasic = await everywhere('/orblocked', BOB_BASIC);
      expect(viaBasic.status).toBe(200);
      expect(viaBasic.body.headers['x-consumer-id']).toBe(ids.bob);
    });

    it('without it, unauthorized requests are allowed (the same OR configuration, another anonymous consumer)', async () => {
      const res = await everywhere('/or', { apikey: 'wrong' });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-anonymous-consumer']).toBe('true');
    });
  });

  describe('a config.anonymous that names no consumer', () => {
    it('gives 500 {"message":"An unexpected error occurred"} only when authentication fails', async () => {
      const valid = await everywhere('/dangling', ALICE_KEY);
      expect(valid.status).toBe(200);
      expect(valid.body.headers['x-consumer-id']).toBe(ids.alice);
      // key-auth is tried first: a request carrying only basic credentials already failed key-auth's authentication,
      // whose fallback then finds no consumer (Kong does the same)
      for (const headers of [{}, { apikey: 'wrong' }, BOB_BASIC] as Array<Record<string, string>>) {
        const failed = await everywhere('/dangling', headers);
        expect(failed.status).toBe(500);
        expect(failed.body).toEqual({ message: 'An unexpected error occurred' });
      }
    });

    it('deleting the anonymous consumer later turns anonymous requests into 500, valid ones still pass', async () => {
      const before = await everywhere('/deletedanon');
      expect(before.status).toBe(200);
      expect(before.body.headers['x-consumer-id']).toBe(ids.anonymous_deleted);
      expect((await admin.delete('/consumers/anonymous_deleted')).status).toBe(204);
      await topology.converge();
      const after = await everywhere('/deletedanon');
      expect(after.status).toBe(500);
      expect(after.body).toEqual({ message: 'An unexpected error occurred' });
      const valid = await everywhere('/deletedanon', ALICE_KEY);
      expect(valid.status).toBe(200);
      expect(valid.body.headers['x-consumer-id']).toBe(ids.alice);
    });
  });
});
