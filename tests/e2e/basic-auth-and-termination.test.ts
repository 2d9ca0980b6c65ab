// basic-auth (credentials, bcrypt storage, success and failure answers) and request-termination (every config field,
// on routes with and without a service), proxied through real processes in both topologies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { basicAuth, cleanUp } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

describe.each(TOPOLOGIES)('basic-auth and request-termination (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let daveId: string;
  let credentialId: string;

  const onEvery = async (path: string, init: RequestInit = {}) => {
    const answers = await Promise.all(topology.dataPlanes.map((dp) => proxied(`${dp.proxyUrl}${path}`, init)));
    for (const answer of answers.slice(1)) expect(answer.status).toBe(answers[0]!.status);
    return answers[0]!;
  };

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** a route without a service, carrying one request-termination config */
  async function terminationRoute(path: string, config: Record<string, string>) {
    const route = await created('/routes', { name: path.slice(1), 'paths[]': path });
    await created(`/routes/${route.id}/plugins`, { name: 'request-termination', ...config });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);

    daveId = (await created('/consumers/', { username: 'dave', custom_id: 'dave-custom' })).id;
    await created('/consumers/', { username: 'erin' });

    await created('/services/', { name: 'basic', url: upstream.url });
    await created('/services/basic/routes', { 'paths[]': '/basic' });
    await created('/services/basic/plugins', { name: 'basic-auth' });
    await created('/services/', { name: 'basic-hidden', url: upstream.url });
    await created('/services/basic-hidden/routes', { 'paths[]': '/hidden' });
    await created('/services/basic-hidden/plugins', { name: 'basic-auth', 'config.hide_credentials': 'true', 'config.realm': 'shop' });

    await terminationRoute('/rt-default', {});
    await terminationRoute('/rt-message', { 'config.status_code': '403', 'config.message': 'Go away' });
    await terminationRoute('/rt-404', { 'config.status_code': '404' });
    await terminationRoute('/rt-418', { 'config.status_code': '418' });
    await terminationRoute('/rt-body', { 'config.status_code': '200', 'config.content_type': 'text/html; charset=utf-8', 'config.body': '<h1>maintenance</h1>' });
    await terminationRoute('/rt-echo', { 'config.status_code': '202', 'config.echo': 'true', 'config.message': 'echoed' });
    // Kong's spec routes 8 to 10 (spec/03-plugins/14-request-termination/02-access_spec.lua)
    await terminationRoute('/rt-204', { 'config.status_code': '204' });
    const api9 = await created('/routes', { name: 'api9', 'hosts[]': 'api9.request-termination.test', 'paths[]': '~/(?<parameter>[^#?/]+)/200', strip_path: 'false' });
    await created(`/routes/${api9.id}/plugins`, { name: 'request-termination', 'config.echo': 'true', 'config.status_code': '404' });
    await created('/services/', { name: 'api10', url: upstream.url });
    await created('/services/api10/routes', { 'hosts[]': 'api10.request-termination.test' });
    await created('/services/api10/plugins', { name: 'request-termination', 'config.echo': 'true', 'config.trigger': 'gimme-an-echo', 'config.status_code': '404' });
    // trigger: on a route WITH a service, so a request without the trigger reaches the upstream
    await created('/services/', { name: 'triggered', url: upstream.url });
    await created('/services/triggered/routes', { 'paths[]': '/rt-trigger' });
    await created('/services/triggered/plugins', { name: 'request-termination', 'config.trigger': 'X-Stop', 'config.status_code': '410', 'config.message': 'stopped' });
    // auth runs before request-termination
    await created('/services/', { name: 'basic-terminated', url: upstream.url });
    await created('/services/basic-terminated/routes', { 'paths[]': '/basic-terminated' });
    await created('/services/basic-terminated/plugins', { name: 'basic-auth' });
    await created('/services/basic-terminated/plugins', { name: 'request-termination', 'config.status_code': '503' });
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  describe('basic-auth credentials at /consumers/{c}/basic-auth', () => {
    it('stores a bcrypt hash and never returns the password in plain text', async () => {
      const res = await admin.post('/consumers/dave/basic-auth', { username: 'dave-login', password: 'open:sesame' });
      expect(res.status).toBe(201);
      credentialId = res.body.id;
      expect(res.body).toMatchObject({ username: 'dave-login', consumer: { id: daveId } });
      expect(res.body.password).not.toContain('open:sesame');
      expect(res.body.password).toMatch(BCRYPT);

      const byUsername = await admin.get('/consumers/dave/basic-auth/dave-login');
      expect(byUsername.status).toBe(200);
      expect(byUsername.body.password).toBe(res.body.password);
      const byId = await admin.get(`/basic-auths/${credentialId}`);
      expect(byId.body).toMatchObject({ id: credentialId, username: 'dave-login' });
      expect(byId.body.password).toMatch(BCRYPT);
      const list = await admin.get('/consumers/dave/basic-auth');
      expect(list.body.data.map((c: any) => c.password)).toEqual([res.body.password]);
      expect(JSON.stringify((await admin.get('/basic-auths')).body)).not.toContain('open:sesame');
    });

    it('refuses a duplicate username (409) and a credential without password (400)', async () => {
      const duplicate = await admin.post('/consumers/erin/basic-auth', { username: 'dave-login', password: 'x' });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.code).toBe(5);
      const noPassword = await admin.post('/consumers/erin/basic-auth', { username: 'erin-login' });
      expect(noPassword.status).toBe(400);
      expect(noPassword.body.fields).toHaveProperty('password');
    });
  });

  describe('basic-auth on the proxy', () => {
    beforeAll(async () => {
      await topology.converge();
    });

    it('forwards valid credentials with the consumer headers and x-credential-identifier = username', async () => {
      const res = await onEvery('/basic/who?x=1', { headers: { authorization: basicAuth('dave-login', 'open:sesame') } });
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/who');
      expect(res.body.query).toEqual({ x: '1' });
      expect(res.body.headers).toMatchObject({
        'x-consumer-id': daveId,
        'x-consumer-username': 'dave',
        'x-consumer-custom-id': 'dave-custom',
        'x-credential-identifier': 'dave-login',
        authorization: basicAuth('dave-login', 'open:sesame'),
      });
      expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
    });

    it('accepts Proxy-Authorization and a lower-case scheme; a password may contain ":"', async () => {
      const viaProxyHeader = await onEvery('/basic', { headers: { 'proxy-authorization': basicAuth('dave-login', 'open:sesame') } });
      expect(viaProxyHeader.status).toBe(200);
      expect(viaProxyHeader.body.headers['x-credential-identifier']).toBe('dave-login');
      const lower = await onEvery('/basic', { headers: { authorization: basicAuth('dave-login', 'open:sesame').replace('Basic', 'basic') } });
      expect(lower.status).toBe(200);
    });

    it('returns 401 Unauthorized on invalid credentials in Authorization (and for a wrong password or unknown user)', async () => {
      for (const authorization of ['foobar', basicAuth('dave-login', 'open'), basicAuth('dave-login', 'open:sesame!'), basicAuth('nobody', 'open:sesame')]) {
        const res = await onEvery('/basic', { headers: { authorization } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Unauthorized' });
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="service"');
      }
    });

    it('returns 401 Unauthorized on invalid credentials in Proxy-Authorization', async () => {
      const res = await onEvery('/hidden', { headers: { 'proxy-authorization': 'foobar' } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Unauthorized' });
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="shop"');
    });

    it('returns 401 Unauthorized on password only, on username only, and returns 401 for valid Base64 encoding', async () => {
      for (const authorization of ['Basic a29uZw==', 'Basic Ym9i', 'Basic adXNlcjEyMzpwYXNzd29yZDEyMw==']) {
        const res = await onEvery('/basic', { headers: { authorization } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Unauthorized' });
      }
    });

    it('returns Unauthorized on missing credentials, with the realm configured or the default one', async () => {
      const res = await onEvery('/basic');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Unauthorized' });
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="service"');
      const realm = await onEvery('/hidden');
      expect(realm.headers.get('www-authenticate')).toBe('Basic realm="shop"');
    });

    it('hide_credentials keeps the Authorization header from the upstream', async () => {
      const res = await onEvery('/hidden', { headers: { authorization: basicAuth('dave-login', 'open:sesame') } });
      expect(res.status).toBe(200);
      expect(res.body.headers.authorization).toBeUndefined();
      expect(res.body.headers['x-credential-identifier']).toBe('dave-login');
    });

    it('a changed password takes effect: the old one is refused even after it was verified (and cached) before', async () => {
      expect((await onEvery('/basic', { headers: { authorization: basicAuth('dave-login', 'open:sesame') } })).status).toBe(200);
      const patched = await admin.patch(`/consumers/dave/basic-auth/${credentialId}`, { password: 'new-secret' });
      expect(patched.status).toBe(200);
      expect(patched.body.password).toMatch(BCRYPT);
      await topology.converge();
      expect((await onEvery('/basic', { headers: { authorization: basicAuth('dave-login', 'open:sesame') } })).status).toBe(401);
      expect((await onEvery('/basic', { headers: { authorization: basicAuth('dave-login', 'new-secret') } })).status).toBe(200);
    });

    it('a deleted credential stops authenticating', async () => {
      expect((await admin.post('/consumers/erin/basic-auth', { username: 'erin-login', password: 'pw' })).status).toBe(201);
      await topology.converge();
      expect((await onEvery('/basic', { headers: { authorization: basicAuth('erin-login', 'pw') } })).status).toBe(200);
      expect((await admin.delete('/consumers/erin/basic-auth/erin-login')).status).toBe(204);
      await topology.converge();
      expect((await onEvery('/basic', { headers: { authorization: basicAuth('erin-login', 'pw') } })).status).toBe(401);
    });
  });

  describe('request-termination', () => {
    beforeAll(async () => {
      await topology.converge();
    });

    it('defaults to 503 {"message":"Service unavailable"} on a route without a service', async () => {
      const res = await onEvery('/rt-default/anything');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service unavailable' });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('status_code and message; default messages per status; no body for a status without one', async () => {
      const message = await onEvery('/rt-message');
      expect(message.status).toBe(403);
      expect(message.body).toEqual({ message: 'Go away' });
      const notFound = await onEvery('/rt-404');
      expect(notFound.status).toBe(404);
      expect(notFound.body).toEqual({ message: 'Not found' });
      const teapot = await onEvery('/rt-418');
      expect(teapot.status).toBe(418);
      expect(teapot.body).toBe('');
    });

    it('content_type + body answer the raw body with that content type', async () => {
      const res = await onEvery('/rt-body');
      expect(res.status).toBe(200);
      expect(res.body).toBe('<h1>maintenance</h1>');
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    });

    it('echo answers the request it received, with the matched route', async () => {
      const res = await onEvery('/rt-echo/path?a=1&a=2', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-probe': 'yes' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(res.status).toBe(202);
      expect(res.body.message).toBe('echoed');
      expect(res.body.request).toMatchObject({
        method: 'POST',
        path: '/rt-echo/path',
        query: { a: ['1', '2'] },
        body: { hello: 'world' },
        raw_body: '{"hello":"world"}',
        scheme: 'http',
        host: '127.0.0.1',
      });
      expect(res.body.request.headers['x-probe']).toBe('yes');
      expect(res.body.matched_route).toMatchObject({ name: 'rt-echo', paths: ['/rt-echo'] });
      expect(res.body.matched_service).toBeNull();
    });

    /** Kong's echo cases: `GET /status/200?<query>` with the body "cool body" and only the headers given, on every data plane */
    async function echoOf(host: string, query: string, extraHeaders = ''): Promise<Array<{ status: number; body: any; port: number }>> {
      return Promise.all(
        topology.dataPlanes.map(async (dp) => {
          const port = Number(new URL(dp.proxyUrl).port);
          const head = `GET /status/200?${query} HTTP/1.1\r\nhost: ${host}\r\n${extraHeaders}content-length: 9\r\nconnection: close`;
          const res = await rawRequest(port, { head: `${head}\r\n\r\ncool body` });
          return { status: res.status, body: res.body === '' ? null : JSON.parse(res.body), port };
        }),
      );
    }

    /** the `request` part of Kong's expected echo for `echoOf`'s request */
    const echoed = (host: string, port: number, headers: Record<string, string>, captures: unknown) => ({
      headers: { 'content-length': '9', host, connection: 'close', ...headers },
      host,
      method: 'GET',
      path: '/status/200',
      port,
      query: { hello: 'there' },
      raw_body: 'cool body',
      scheme: 'http',
      uri_captures: captures,
    });

    it('returns 204 without content length header', async () => {
      for (const dp of topology.dataPlanes) {
        const res = await rawRequest(Number(new URL(dp.proxyUrl).port), { head: 'GET /rt-204/status/204 HTTP/1.1\r\nhost: localhost\r\nconnection: close' });
        expect(res.status).toBe(204);
        expect(res.headers['content-length']).toBeUndefined();
        expect(res.headers['transfer-encoding']).toBeUndefined();
        expect(res.body).toBe('');
      }
    });

    it('echos a request if no trigger is set', async () => {
      for (const res of await echoOf('api9.request-termination.test', 'hello=there')) {
        expect(res.status).toBe(404);
        expect(res.body.message).toBe('Not found');
        expect(res.body.matched_route.hosts[0]).toBe('api9.request-termination.test');
        expect(res.body.request).toEqual(echoed('api9.request-termination.test', res.port, {}, { named: { parameter: 'status' }, unnamed: ['status'] }));
      }
    });

    it("doesn't echo a request if the trigger is set but not specified", async () => {
      for (const dp of topology.dataPlanes) {
        const res = await rawRequest(Number(new URL(dp.proxyUrl).port), { head: 'GET /status/200 HTTP/1.1\r\nhost: api10.request-termination.test\r\nconnection: close' });
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body).path).toBe('/status/200');
      }
    });

    it('echos a request if the trigger is specified as a header', async () => {
      for (const res of await echoOf('api10.request-termination.test', 'hello=there', 'gimme-an-echo: anything will do\r\n')) {
        expect(res.status).toBe(404);
        expect(res.body.matched_route.hosts[0]).toBe('api10.request-termination.test');
        expect(res.body.request).toEqual(echoed('api10.request-termination.test', res.port, { 'gimme-an-echo': 'anything will do' }, { named: {}, unnamed: [] }));
      }
    });

    it('echos a request if the trigger is specified as a query parameter', async () => {
      for (const res of await echoOf('api10.request-termination.test', 'hello=there&gimme-an-echo=anything%20will%20do')) {
        expect(res.status).toBe(404);
        expect(res.body.request.query).toEqual({ hello: 'there', 'gimme-an-echo': 'anything will do' });
        expect(res.body.request.headers).toEqual({ 'content-length': '9', host: 'api10.request-termination.test', connection: 'close' });
        expect(res.body.request.port).toBe(res.port);
        expect(res.body.request.uri_captures).toEqual({ named: {}, unnamed: [] });
        expect(res.body.request).not.toHaveProperty('body');
      }
    });

    it('trigger: terminates only requests carrying the header or query argument; others reach the upstream', async () => {
      const passes = await onEvery('/rt-trigger/x');
      expect(passes.status).toBe(200);
      expect(passes.body.path).toBe('/x');
      const byHeader = await onEvery('/rt-trigger/x', { headers: { 'x-stop': '1' } });
      expect(byHeader.status).toBe(410);
      expect(byHeader.body).toEqual({ message: 'stopped' });
      const byQuery = await onEvery('/rt-trigger/x?X-Stop=yes');
      expect(byQuery.status).toBe(410);
    });

    it('runs after authentication: 401 without credentials, the termination with them', async () => {
      const received = upstream.received.length;
      const anonymous = await onEvery('/basic-terminated');
      expect(anonymous.status).toBe(401);
      const authenticated = await onEvery('/basic-terminated', { headers: { authorization: basicAuth('dave-login', 'new-secret') } });
      expect(authenticated.status).toBe(503);
      expect(authenticated.body).toEqual({ message: 'Service unavailable' });
      expect(upstream.received.length).toBe(received);
    });

    it('refuses inconsistent configs with Kong\'s messages', async () => {
      const route = await created('/routes', { name: 'rt-invalid', 'paths[]': '/rt-invalid' });
      const cases: Array<[Record<string, string>, string]> = [
        [{ 'config.message': 'm', 'config.body': 'b' }, 'message cannot be used with content_type or body'],
        [{ 'config.content_type': 'text/plain' }, 'content_type requires a body'],
        [{ 'config.echo': 'true', 'config.body': 'b' }, 'echo cannot be used with content_type and body'],
      ];
      for (const [config, message] of cases) {
        const res = await admin.post(`/routes/${route.id}/plugins`, { name: 'request-termination', ...config });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.fields)).toContain(message);
      }
      const outOfRange = await admin.post(`/routes/${route.id}/plugins`, { name: 'request-termination', 'config.status_code': '600' });
      expect(outOfRange.status).toBe(400);
      expect(outOfRange.body.fields.config.status_code).toBe('value should be between 100 and 599');
    });
  });
});
