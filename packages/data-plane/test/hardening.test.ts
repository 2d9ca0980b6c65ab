// Hostile input at the data plane (kong-reference decisions 12, 13, 15, 17): path normalisation, client header
// scrubbing, buffered-body limits, 431/408, linear-time route regexes. One data plane in this process, real upstreams.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Snapshot } from '@gatehouse/core';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, rawRequest, startEchoUpstream, startFileUpstream, type EchoUpstream, type FileUpstream } from '@gatehouse/testkit';
import { MemoryTokenStore } from '@gatehouse/plugins';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer, type DataPlaneServerOptions } from '../src';
import { quietLog, send } from './harness';

const SECRET = 'the private file';
const PUBLIC = 'the public file';
const alice = makeConsumer({ username: 'alice' });

function buildSnapshot(files: FileUpstream, echo: EchoUpstream): Snapshot {
  const fileService = makeService({ name: 'files', url: files.url });
  const echoService = makeService({ name: 'echo', url: echo.url });
  const routes = {
    publicRoute: makeRoute({ name: 'public', paths: ['/app/public'], strip_path: false, service: { id: fileService.id } }),
    privateRoute: makeRoute({ name: 'private', paths: ['/app/private'], strip_path: false, service: { id: fileService.id } }),
    catchAll: makeRoute({ name: 'catch-all', paths: ['/'], strip_path: false, service: { id: fileService.id } }),
    echoRoute: makeRoute({ name: 'echo', paths: ['/echo'], service: { id: echoService.id } }),
    bodyKey: makeRoute({ name: 'body-key', paths: ['/body-key'], service: { id: echoService.id } }),
    hmac: makeRoute({ name: 'hmac', paths: ['/hmac'], service: { id: echoService.id } }),
    redos: makeRoute({ name: 'redos', paths: ['~/redos/(a+)+$'], service: { id: echoService.id } }),
    underscoreKey: makeRoute({ name: 'underscore-key', paths: ['/underscore-key'], service: { id: echoService.id } }),
    oauth: makeRoute({ name: 'oauth', paths: ['/oauth'], service: { id: echoService.id } }),
  };
  return makeSnapshot({
    services: [fileService, echoService],
    routes: Object.values(routes),
    consumers: [alice],
    plugins: [
      makePlugin({ name: 'key-auth', route: { id: routes.privateRoute.id }, config: {} }),
      makePlugin({ name: 'key-auth', route: { id: routes.bodyKey.id }, config: { key_in_body: true } }),
      makePlugin({ name: 'key-auth', route: { id: routes.underscoreKey.id }, config: { key_names: ['api_key'] } }),
      makePlugin({
        name: 'oauth2',
        route: { id: routes.oauth.id },
        config: { enable_client_credentials: true, accept_http_if_already_terminated: true, scopes: ['read'] },
      }),
      makePlugin({ name: 'hmac-auth', route: { id: routes.hmac.id }, config: { validate_request_body: true } }),
    ],
    credentials: {
      keyauth_credentials: [makeCredential(alice, { key: 'alice-key' })],
      hmacauth_credentials: [makeCredential(alice, { username: 'alice-hmac', secret: 'hmac-secret' })],
      oauth2_credentials: [makeCredential(alice, { name: 'app', client_id: 'app-id', client_secret: 'app-secret', hash_secret: false, redirect_uris: ['https://app.test/cb'], client_type: 'confidential' })],
    },
  });
}

async function start(snapshot: Snapshot, options: Partial<DataPlaneServerOptions> = {}): Promise<DataPlaneServer> {
  return createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, log: quietLog, ...options });
}

describe('data plane under hostile input', () => {
  let files: FileUpstream;
  let echo: EchoUpstream;
  let snapshot: Snapshot;
  let dp: DataPlaneServer;

  beforeAll(async () => {
    files = await startFileUpstream({ '/app/private/secret': SECRET, '/app/public/file': PUBLIC });
    echo = await startEchoUpstream();
    snapshot = buildSnapshot(files, echo);
    dp = await start(snapshot, { maxBufferedBody: 64 * 1024, trustedIps: ['127.0.0.1'], runtime: { oauth2Tokens: new MemoryTokenStore() } });
  });

  afterAll(async () => {
    await dp.close();
    await files.close();
    await echo.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(dp.port, { head: [`GET ${path} HTTP/1.1`, 'host: gw.test', 'connection: close', ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`)].join('\r\n') });

  describe('path normalisation (decision 12)', () => {
    it('serves the public file and protects the private one', async () => {
      expect(await get('/app/public/file')).toMatchObject({ status: 200, body: PUBLIC });
      expect(await get('/app/private/secret')).toMatchObject({ status: 403 });
      expect(await get('/app/private/secret', { apikey: 'alice-key' })).toMatchObject({ status: 200, body: SECRET });
    });

    it.each([
      '/app/public/../private/secret',
      '/app/public/%2e%2e/private/secret',
      '/app/public/.%2e/private/secret',
      '/app/public/%2E%2E/private/secret',
      '//app/private/secret',
      '/app//private/secret',
      '/./app/private/secret',
      '/app/%70rivate/secret',
    ])('%s is the private route: 403 without a key, and forwarded normalised with one', async (path) => {
      const refused = await get(path);
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { message: 'No API key found in headers or querystring' }]);
      expect(refused.body).not.toContain(SECRET);
      const before = files.received.length;
      expect(await get(path, { apikey: 'alice-key' })).toMatchObject({ status: 200, body: SECRET });
      expect(files.received.slice(before).map((r) => r.url)).toEqual(['/app/private/secret']);
    });

    it.each(['/app/public/..%2fprivate/secret', '/app/public/..%2Fprivate/secret', '/app/public/..%5Cprivate/secret', '/app/public/..;/private/secret', '/app/../../etc'])(
      '%s answers 400 and reaches no upstream',
      async (path) => {
        const before = files.received.length;
        const res = await get(path);
        expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Bad request' }]);
        expect(files.received.length).toBe(before);
      },
    );

    it('WebSocket upgrades are routed on the normalised path too', async () => {
      const upgrade = (path: string) =>
        rawRequest(dp.port, {
          head: [`GET ${path} HTTP/1.1`, 'host: gw', 'connection: Upgrade', 'upgrade: websocket', 'sec-websocket-version: 13', 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ=='].join('\r\n'),
        });
      expect((await upgrade('/app/public/../private/secret')).status).toBe(403);
      expect((await upgrade('/app/public/%2e%2e/private/secret')).status).toBe(403);
      expect((await upgrade('/app/public/..%2fprivate/secret')).status).toBe(400);
    });

    it('keeps the query string and forwards the normalised path after strip_path', async () => {
      const res = await get('/echo/a/../b//c/%7Ed?x=%2e%2e&y=1');
      expect(res.status).toBe(200);
      const echoed = JSON.parse(res.body);
      expect(echoed.url).toBe('/b/c/~d?x=%2e%2e&y=1');
      expect(echoed.headers['x-forwarded-path']).toBe('/echo/b/c/~d');
    });
  });

  describe('client headers (decision 13)', () => {
    it('drops header names with underscores and every identity header, on a route without plugins', async () => {
      const res = await get('/echo/h', {
        x_consumer_username: 'mallory',
        'x-consumer-username': 'mallory',
        'x-consumer-groups': 'admins',
        'x-consumer-anything': 'x',
        'x-credential-identifier': 'forged',
        'x-anonymous-consumer': 'false',
        'x-authenticated-scope': 'admin',
        'x-authenticated-userid': 'root',
        'x-authenticated-groups': 'wheel',
        'X-Custom-Header': 'kept',
      });
      const headers = JSON.parse(res.body).headers as Record<string, string>;
      for (const name of ['x_consumer_username', 'x-consumer-username', 'x-consumer-groups', 'x-consumer-anything', 'x-credential-identifier', 'x-anonymous-consumer', 'x-authenticated-scope', 'x-authenticated-userid', 'x-authenticated-groups']) {
        expect(headers[name]).toBeUndefined();
      }
      expect(headers['x-custom-header']).toBe('kept');
    });

    it('a header with an underscore is not read by plugins either', async () => {
      // key-auth configured with key name "api_key": the header is gone before key-auth looks (the query still works)
      expect((await get('/underscore-key/x', { api_key: 'alice-key' })).status).toBe(403);
      expect((await get('/underscore-key/x?api_key=alice-key')).status).toBe(200);
    });

    it('keeps underscore headers when allowed, never identity ones', async () => {
      const lenient = await start(snapshot, { underscoreHeaders: true });
      try {
        const res = await rawRequest(lenient.port, { head: 'GET /echo/h HTTP/1.1\r\nhost: gw\r\nconnection: close\r\nx_trace_id: 7\r\nx-consumer-id: forged' });
        const headers = JSON.parse(res.body).headers as Record<string, string>;
        expect(headers.x_trace_id).toBe('7');
        expect(headers['x-consumer-id']).toBeUndefined();
        const keyed = await rawRequest(lenient.port, { head: 'GET /underscore-key/x HTTP/1.1\r\nhost: gw\r\nconnection: close\r\napi_key: alice-key' });
        expect(keyed.status).toBe(200);
        expect(JSON.parse(keyed.body).headers['x-consumer-username']).toBe('alice');
      } finally {
        await lenient.close();
      }
    });
  });

  describe('buffered bodies (decision 15)', () => {
    const tooLarge = { message: 'Request size limit exceeded' };

    it('a key_in_body route under the limit works', async () => {
      const res = await send(dp.port, '/body-key/x', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'apikey=alice-key&a=1' });
      expect(res.status).toBe(200);
    });

    it('200 MB to a key_in_body route: 413 before the body is sent, nothing reaches the upstream', async () => {
      const before = echo.received.length;
      const res = await rawRequest(dp.port, {
        head: `POST /body-key/x HTTP/1.1\r\nhost: gw\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${200 * 1024 * 1024}`,
        bodyBytes: 200 * 1024 * 1024,
      });
      expect([res.status, JSON.parse(res.body)]).toEqual([413, tooLarge]);
      expect(res.bodyBytesSent).toBeLessThan(200 * 1024 * 1024);
      expect(echo.received.length).toBe(before);
    });

    it('a chunked body past the limit: 413 once the limit is crossed, the rest never read', async () => {
      const before = echo.received.length;
      const res = await rawRequest(dp.port, {
        head: 'POST /body-key/x HTTP/1.1\r\nhost: gw\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked',
        bodyBytes: 200 * 1024 * 1024,
        chunked: true,
      });
      expect([res.status, JSON.parse(res.body)]).toEqual([413, tooLarge]);
      expect(res.bodyBytesSent).toBeLessThan(200 * 1024 * 1024);
      expect(echo.received.length).toBe(before);
    });

    it('hmac-auth body digests are limited too', async () => {
      const date = new Date().toUTCString();
      const signature = createHmac('sha256', 'hmac-secret').update(`date: ${date}`).digest('base64');
      const authorization = `hmac username="alice-hmac", algorithm="hmac-sha256", headers="date", signature="${signature}"`;
      const res = await rawRequest(dp.port, {
        head: `POST /hmac/x HTTP/1.1\r\nhost: gw\r\ndate: ${date}\r\nauthorization: ${authorization}\r\ndigest: SHA-256=x\r\ncontent-length: ${1024 * 1024}`,
        bodyBytes: 1024 * 1024,
      });
      expect([res.status, JSON.parse(res.body)]).toEqual([413, tooLarge]);
    });

    it('oauth2 token endpoint bodies are limited too; a small one still gets its token', async () => {
      const form = 'grant_type=client_credentials&client_id=app-id&client_secret=app-secret&scope=read';
      const small = await send(dp.port, '/oauth/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
        body: form,
      });
      expect(small.status).toBe(200);
      expect(small.json.token_type).toBe('bearer');
      const res = await rawRequest(dp.port, {
        head: `POST /oauth/oauth2/token HTTP/1.1\r\nhost: gw\r\nx-forwarded-proto: https\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked`,
        bodyBytes: 1024 * 1024,
        chunked: true,
      });
      expect([res.status, JSON.parse(res.body)]).toEqual([413, tooLarge]);
    });

    it('a body nobody reads is streamed to the upstream whatever its size', async () => {
      const size = 1024 * 1024; // 16× the buffering limit of this data plane
      const res = await rawRequest(dp.port, { head: `POST /app/public/file HTTP/1.1\r\nhost: gw\r\nconnection: close\r\ncontent-length: ${size}`, bodyBytes: size });
      expect(res.status).toBe(200);
      expect(files.received.at(-1)).toMatchObject({ url: '/app/public/file', bodyBytes: size });
    });
  });

  describe('431 and 408', () => {
    it('headers past Node\'s size limit answer 431', async () => {
      const res = await get('/echo/h', { 'x-big': 'a'.repeat(20_000) });
      expect(res.status).toBe(431);
    });

    it('a client too slow to send its headers gets 408', async () => {
      const slow = await start(snapshot, { headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 });
      try {
        const res = await rawRequest(slow.port, { head: 'GET /echo/h HTTP/1.1\r\nhost: gw', unfinishedHead: true, timeoutMs: 10_000 });
        expect(res.status).toBe(408);
      } finally {
        await slow.close();
      }
    });

    it('a malformed request still answers 400', async () => {
      const res = await rawRequest(dp.port, { head: 'GET /echo HTTP/1.1\r\nhost: gw\r\nbad header line' });
      expect(res.status).toBe(400);
    });
  });

  describe('route regexes (decision 17)', () => {
    it('~/redos/(a+)+$ answers a long hostile path (no match) and matches a benign one', async () => {
      const hostile = await get(`/redos/${'a'.repeat(8_000)}!`);
      expect(hostile.status).toBe(404);
      const benign = await get('/redos/aaaa');
      expect(benign.status).toBe(200);
      expect(JSON.parse(benign.body).url).toBe('/');
    });
  });
});
