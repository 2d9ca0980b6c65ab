// oauth2 through the real admin API and proxy, in both topologies: tokens live where every data plane sees them
// (Redis in the cluster, the shared store in embedded mode), so a token issued by data plane 0 works on all of them;
// the password grant and refresh; oauth2 under AND with key-auth (interface rule 4); /oauth2_tokens on the control
// plane; and the HTTPS rule (a trusted proxy's X-Forwarded-Proto with accept_http_if_already_terminated).
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, fetch as undiciFetch } from 'undici';
import { rawRequest, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

/** What a TLS-terminating proxy in front of the data plane adds (the data planes trust 127.0.0.1). */
const TERMINATED = { 'x-forwarded-proto': 'https' };
const CLIENT = { client_id: 'test-client', client_secret: 'test-secret' };
const MUST_USE_HTTPS = { error: 'access_denied', error_description: 'You must use HTTPS' };
const INVALID_TOKEN = { error: 'invalid_token', error_description: 'The access token is invalid or has expired' };

describe.each(TOPOLOGIES)('oauth2 (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let provisionKey: string;
  const ids: Record<string, string> = {};
  /** the token issued by the first test, listed by /oauth2_tokens later */
  let clientCredentialsToken: string;

  const dp = (i: number) => topology.dataPlanes[i]!.proxyUrl;
  const lastDp = () => dp(topology.dataPlanes.length - 1);

  /** POST <proxy>/<route>/oauth2/token, form-encoded */
  const tokenRequest = (proxyUrl: string, route: string, form: Record<string, string>, headers: Record<string, string> = TERMINATED) =>
    proxied(`${proxyUrl}/${route}/oauth2/token`, { method: 'POST', headers, body: new URLSearchParams(form) });

  const withToken = (token: string, headers: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...headers } });

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function serviceWithRoute(label: string): Promise<void> {
    ids[label] = (await created('/services/', { name: label, url: `${upstream.url}/` })).id;
    await created(`/services/${label}/routes`, { name: label, 'paths[]': `/${label}` });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_TRUSTED_IPS: '127.0.0.1' } });
    admin = adminClient(topology.adminUrl);

    for (const username of ['app-owner', 'key-holder']) ids[username] = (await created('/consumers/', { username })).id;
    const app = await created('/consumers/app-owner/oauth2', { name: 'Test App', ...CLIENT, 'redirect_uris[]': 'https://app.example/cb' });
    expect(app).toMatchObject({ name: 'Test App', client_id: 'test-client', client_secret: 'test-secret', hash_secret: false, redirect_uris: ['https://app.example/cb'] });
    ids.app = app.id;
    const hashed = await created('/consumers/app-owner/oauth2', { name: 'Hashed App', client_id: 'hashed-client', client_secret: 'hashed-secret', hash_secret: 'true' });
    // Kong keeps only a hash of such a secret, and answers with it
    expect(hashed.hash_secret).toBe(true);
    expect(hashed.client_secret).not.toBe('hashed-secret');
    await created('/consumers/key-holder/key-auth', { key: 'holder-key' });

    await serviceWithRoute('oauth');
    const plugin = await created('/services/oauth/plugins', {
      name: 'oauth2',
      'config.enable_client_credentials': 'true',
      'config.enable_password_grant': 'true',
      'config.enable_authorization_code': 'true',
      'config.accept_http_if_already_terminated': 'true',
      'config.scopes': ['read', 'write'],
    });
    provisionKey = plugin.config.provision_key;
    expect(provisionKey).toMatch(/^[A-Za-z0-9]{32}$/);

    await serviceWithRoute('oauth-strict');
    await created('/services/oauth-strict/plugins', { name: 'oauth2', 'config.enable_client_credentials': 'true' });

    // Kong's oauth2_11.test (a custom header) and a plugin with global_credentials
    await serviceWithRoute('oauth-custom');
    await created('/services/oauth-custom/plugins', {
      name: 'oauth2',
      'config.enable_client_credentials': 'true',
      'config.accept_http_if_already_terminated': 'true',
      'config.auth_header_name': 'custom-header-name',
    });
    await serviceWithRoute('oauth-global');
    await created('/services/oauth-global/plugins', { name: 'oauth2', 'config.enable_client_credentials': 'true', 'config.accept_http_if_already_terminated': 'true', 'config.global_credentials': 'true' });
    await created('/consumers/app-owner/oauth2', { name: 'Public App', client_id: 'public-client', client_secret: 'public-secret', client_type: 'public', 'redirect_uris[]': 'https://app.example/cb' });

    await serviceWithRoute('oauth-and');
    await created('/services/oauth-and/plugins', { name: 'oauth2', 'config.enable_client_credentials': 'true', 'config.accept_http_if_already_terminated': 'true' });
    await created('/services/oauth-and/plugins', { name: 'key-auth' });
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  it('client_credentials: a token issued through data plane 0 is accepted by every data plane', async () => {
    const issued = await tokenRequest(dp(0), 'oauth', { grant_type: 'client_credentials', scope: 'read', ...CLIENT });
    expect(issued.status).toBe(200);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    expect(issued.headers.get('pragma')).toBe('no-cache');
    expect(issued.body).toEqual({ token_type: 'bearer', access_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/), expires_in: 7200 });
    clientCredentialsToken = issued.body.access_token;

    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const res = await proxied(`${proxyUrl}/oauth/resource`, withToken(clientCredentialsToken, { 'x-authenticated-userid': 'forged' }));
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/resource');
      expect(res.body.headers['x-consumer-id']).toBe(ids['app-owner']);
      expect(res.body.headers['x-consumer-username']).toBe('app-owner');
      expect(res.body.headers['x-credential-identifier']).toBe('test-client');
      expect(res.body.headers['x-authenticated-scope']).toBe('read');
      expect(res.body.headers['x-authenticated-userid']).toBeUndefined();
      // the access_token parameter works as well as the header
      expect((await proxied(`${proxyUrl}/oauth/q?access_token=${clientCredentialsToken}`)).status).toBe(200);
    }
  });

  it('a hashed secret authenticates the client; wrong secrets, unknown tokens and other services are refused', async () => {
    const hashed = await tokenRequest(lastDp(), 'oauth', { grant_type: 'client_credentials', client_id: 'hashed-client', client_secret: 'hashed-secret' });
    expect(hashed.status).toBe(200);
    expect((await proxied(`${dp(0)}/oauth`, withToken(hashed.body.access_token))).status).toBe(200);

    const wrongSecret = await tokenRequest(dp(0), 'oauth', { grant_type: 'client_credentials', client_id: 'test-client', client_secret: 'nope' });
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body).toEqual({ error: 'invalid_client', error_description: 'Invalid client authentication' });

    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const unknown = await proxied(`${proxyUrl}/oauth`, withToken('not-a-token'));
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual(INVALID_TOKEN);
      const missing = await proxied(`${proxyUrl}/oauth`);
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'The access token is missing' });
      expect(missing.headers.get('www-authenticate')).toBe('Bearer');
      // a token belongs to the service it was issued for
      const otherService = await proxied(`${proxyUrl}/oauth-strict`, withToken(clientCredentialsToken));
      expect(otherService.status).toBe(401);
      expect(otherService.body).toEqual(INVALID_TOKEN);
    }
  });

  it('password grant through one data plane, refresh through another: the old tokens stop working everywhere', async () => {
    const wrongKey = await tokenRequest(lastDp(), 'oauth', { grant_type: 'password', provision_key: 'wrong', authenticated_userid: 'user-123', ...CLIENT });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body).toEqual({ error: 'invalid_provision_key', error_description: 'Invalid provision_key' });

    const issued = await tokenRequest(lastDp(), 'oauth', { grant_type: 'password', provision_key: provisionKey, authenticated_userid: 'user-123', scope: 'read write', ...CLIENT });
    expect(issued.status).toBe(200);
    expect(issued.body).toEqual({
      token_type: 'bearer',
      access_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      refresh_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      expires_in: 7200,
    });
    const first = issued.body as { access_token: string; refresh_token: string };
    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const res = await proxied(`${proxyUrl}/oauth`, withToken(first.access_token));
      expect(res.status).toBe(200);
      expect(res.body.headers['x-authenticated-userid']).toBe('user-123');
      expect(res.body.headers['x-authenticated-scope']).toBe('read write');
      expect(res.body.headers['x-consumer-id']).toBe(ids['app-owner']);
    }

    const refreshed = await tokenRequest(dp(0), 'oauth', { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...CLIENT });
    expect(refreshed.status).toBe(200);
    const second = refreshed.body as { access_token: string; refresh_token: string };
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const old = await proxied(`${proxyUrl}/oauth`, withToken(first.access_token));
      expect(old.status).toBe(401);
      expect(old.body).toEqual(INVALID_TOKEN);
      const fresh = await proxied(`${proxyUrl}/oauth`, withToken(second.access_token));
      expect(fresh.status).toBe(200);
      expect(fresh.body.headers['x-authenticated-userid']).toBe('user-123');
    }
    // a refresh token is used once, whichever data plane sees it again
    const reused = await tokenRequest(lastDp(), 'oauth', { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...CLIENT });
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual({ error: 'invalid_request', error_description: 'Invalid refresh_token' });
  });

  it('authorization code with PKCE: the code from data plane 0 is exchanged once, on the last data plane', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorized = await proxied(`${dp(0)}/oauth/oauth2/authorize`, {
      method: 'POST',
      headers: TERMINATED,
      body: new URLSearchParams({
        response_type: 'code',
        client_id: 'test-client',
        provision_key: provisionKey,
        authenticated_userid: 'user-456',
        scope: 'read',
        state: 'xyz',
        code_challenge: challenge,
      }),
    });
    expect(authorized.status).toBe(200);
    const redirect = new URL(authorized.body.redirect_uri);
    expect(`${redirect.origin}${redirect.pathname}`).toBe('https://app.example/cb');
    expect(redirect.searchParams.get('state')).toBe('xyz');
    const code = redirect.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9]{32}$/);

    const wrongVerifier = await tokenRequest(lastDp(), 'oauth', { grant_type: 'authorization_code', code, code_verifier: randomBytes(32).toString('base64url'), ...CLIENT });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid code' });
    const exchanged = await tokenRequest(lastDp(), 'oauth', { grant_type: 'authorization_code', code, code_verifier: verifier, ...CLIENT });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ token_type: 'bearer', expires_in: 7200, refresh_token: expect.any(String) });
    const again = await tokenRequest(dp(0), 'oauth', { grant_type: 'authorization_code', code, code_verifier: verifier, ...CLIENT });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: 'invalid_request', error_description: 'Invalid code' });

    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const res = await proxied(`${proxyUrl}/oauth`, withToken(exchanged.body.access_token));
      expect(res.status).toBe(200);
      expect(res.body.headers['x-authenticated-userid']).toBe('user-456');
      expect(res.body.headers['x-authenticated-scope']).toBe('read');
    }
  });

  it('under AND with key-auth (rule 4) the token endpoint answers only after key-auth authenticated the request', async () => {
    const form = { grant_type: 'client_credentials', ...CLIENT };
    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const noKey = await tokenRequest(proxyUrl, 'oauth-and', form);
      expect(noKey.status).toBe(403);
      expect(noKey.body).toEqual({ message: 'No API key found in headers or querystring' });
      const badKey = await tokenRequest(proxyUrl, 'oauth-and', form, { ...TERMINATED, apikey: 'wrong' });
      expect(badKey.status).toBe(401);
      expect(badKey.body).toEqual({ message: 'Invalid authentication credentials' });
    }
    const issued = await tokenRequest(dp(0), 'oauth-and', form, { ...TERMINATED, apikey: 'holder-key' });
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);

    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      // both: key-auth runs after oauth2 (priority 1250 < 1400), so its consumer is the one upstream sees
      const both = await proxied(`${proxyUrl}/oauth-and`, withToken(token, { apikey: 'holder-key' }));
      expect(both.status).toBe(200);
      expect(both.body.headers['x-consumer-id']).toBe(ids['key-holder']);
      const tokenOnly = await proxied(`${proxyUrl}/oauth-and`, withToken(token));
      expect(tokenOnly.status).toBe(403);
      const keyOnly = await proxied(`${proxyUrl}/oauth-and`, { headers: { apikey: 'holder-key' } });
      expect(keyOnly.status).toBe(401);
      expect(keyOnly.body).toEqual({ error: 'invalid_request', error_description: 'The access token is missing' });
    }
    expect(upstream.received.filter((r) => r.path.includes('oauth2'))).toEqual([]);
  });

  it('/oauth2_tokens on the control plane lists the issued token; deleting it revokes it on every data plane', async () => {
    const listed = await admin.get('/oauth2_tokens');
    expect(listed.status).toBe(200);
    // client credentials (2), password (revoked by the refresh), refresh, authorization code, AND route
    expect(listed.body.data).toHaveLength(5);
    // only the token's digest is kept, and shown in its place
    const shown = `sha256:${createHash('sha256').update(clientCredentialsToken).digest('hex')}`;
    const entry = listed.body.data.find((t: { access_token: string }) => t.access_token === shown);
    expect(entry).toEqual({
      id: expect.any(String),
      created_at: expect.any(Number),
      credential: { id: ids.app },
      service: { id: ids.oauth },
      token_type: 'bearer',
      expires_in: 7200,
      access_token: shown,
      refresh_token: null,
      authenticated_userid: null,
      scope: 'read',
    });
    expect(String(entry.created_at)).toHaveLength(10);
    const byAccessToken = await admin.get(`/oauth2_tokens/${clientCredentialsToken}`);
    expect(byAccessToken.status).toBe(200);
    expect(byAccessToken.body.id).toBe(entry.id);

    expect((await admin.delete(`/oauth2_tokens/${entry.id}`)).status).toBe(204);
    expect((await admin.get(`/oauth2_tokens/${entry.id}`)).status).toBe(404);
    for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
      const res = await proxied(`${proxyUrl}/oauth`, withToken(clientCredentialsToken));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_TOKEN);
    }
  });

  describe('the HTTPS rule', () => {
    const form = { grant_type: 'client_credentials', ...CLIENT };

    it('plain HTTP without a terminating proxy is refused with Kong\'s message', async () => {
      for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
        const res = await tokenRequest(proxyUrl, 'oauth', form, {});
        expect(res.status).toBe(400);
        expect(res.body).toEqual(MUST_USE_HTTPS);
      }
    });

    it('X-Forwarded-Proto: https is not enough without accept_http_if_already_terminated', async () => {
      const res = await tokenRequest(dp(0), 'oauth-strict', form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(MUST_USE_HTTPS);
    });

    it('X-Forwarded-Proto: https from an address that is not a trusted proxy is refused', async () => {
      // 127.0.0.2 is loopback too, but GATEHOUSE_TRUSTED_IPS names only 127.0.0.1
      const untrusted = new Agent({ localAddress: '127.0.0.2' });
      try {
        const res = await undiciFetch(`${dp(0)}/oauth/oauth2/token`, { method: 'POST', headers: TERMINATED, body: new URLSearchParams(form), dispatcher: untrusted });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(MUST_USE_HTTPS);
        // the same request from the trusted address is served
        expect((await tokenRequest(dp(0), 'oauth', form)).status).toBe(200);
      } finally {
        await untrusted.close();
      }
    });

    it('the token endpoint only takes POST: 405 invalid_method with a Bearer challenge', async () => {
      for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
        const res = await proxied(`${proxyUrl}/oauth/oauth2/token`, { headers: TERMINATED });
        expect(res.status).toBe(405);
        expect(res.body).toEqual({ error: 'invalid_method', error_description: 'The HTTP method GET is invalid for the token endpoint' });
        expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_method" error_description="The HTTP method GET is invalid for the token endpoint"');
      }
    });
  });

  describe("Kong's access spec", () => {
    const issue = async (route: string) => (await tokenRequest(dp(0), route, { grant_type: 'client_credentials', ...CLIENT })).body.access_token as string;

    it('works when a correct access_token is being sent in the custom header, and in duplicate custom headers', async () => {
      const token = await issue('oauth-custom');
      for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
        const port = Number(new URL(proxyUrl).port);
        const once = await rawRequest(port, { head: `GET /oauth-custom/request HTTP/1.1\r\nhost: oauth2.test\r\ncustom-header-name: bearer ${token}\r\nconnection: close` });
        expect(once.status).toBe(200);
        const twice = await rawRequest(port, {
          head: `GET /oauth-custom/request HTTP/1.1\r\nhost: oauth2.test\r\ncustom-header-name: bearer ${token}\r\ncustom-header-name: bearer ${token}\r\nconnection: close`,
        });
        expect(twice.status).toBe(200);
      }
    });

    it('responds 401 when using global token against non-global plugin', async () => {
      const token = await issue('oauth-global');
      for (const proxyUrl of topology.dataPlanes.map((p) => p.proxyUrl)) {
        expect((await proxied(`${proxyUrl}/oauth-global`, withToken(token))).status).toBe(200);
        const res = await proxied(`${proxyUrl}/oauth`, withToken(token));
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'invalid_token', error_description: "The access token is global, but the current plugin is configured without 'global_credentials'" });
        expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token" error_description="The access token is invalid or has expired"');
      }
    });

    it('a public app: fails when a secret provided for public app; succeeds when using code challenge; fails when code verifier is less than 43 characters', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const askCode = async () => {
        const authorized = await proxied(`${dp(0)}/oauth/oauth2/authorize`, {
          method: 'POST',
          headers: TERMINATED,
          body: new URLSearchParams({ response_type: 'code', client_id: 'public-client', provision_key: provisionKey, authenticated_userid: 'u-1', code_challenge: createHash('sha256').update(verifier).digest('base64url') }),
        });
        return new URL(authorized.body.redirect_uri).searchParams.get('code')!;
      };
      const code = await askCode();
      const withSecret = await tokenRequest(lastDp(), 'oauth', { grant_type: 'authorization_code', client_id: 'public-client', client_secret: 'public-secret', code, code_verifier: verifier });
      expect(withSecret.status).toBe(400);
      expect(withSecret.body).toEqual({ error: 'invalid_request', error_description: 'client_secret is disallowed for public clients' });
      const short = await tokenRequest(lastDp(), 'oauth', { grant_type: 'authorization_code', client_id: 'public-client', code, code_verifier: 'abc123' });
      expect(short.body).toEqual({ error: 'invalid_request', error_description: 'code_verifier must be between 43 and 128 characters' });
      const exchanged = await tokenRequest(lastDp(), 'oauth', { grant_type: 'authorization_code', client_id: 'public-client', code, code_verifier: verifier });
      expect(exchanged.status).toBe(200);
      const challengeMissing = await proxied(`${dp(0)}/oauth/oauth2/authorize`, {
        method: 'POST',
        headers: TERMINATED,
        body: new URLSearchParams({ response_type: 'code', client_id: 'public-client', provision_key: provisionKey, authenticated_userid: 'u-1' }),
      });
      expect(new URL(challengeMissing.body.redirect_uri).searchParams.get('error_description')).toBe('code_challenge is required for public clients');
    });
  });
});
