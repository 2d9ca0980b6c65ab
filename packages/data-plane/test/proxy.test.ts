import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Snapshot } from '@gatehouse/core';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { closedPort, startDataPlane, type RunningDataPlane } from './harness';

const SPOOFED = {
  'x-consumer-id': 'spoofed-id',
  'x-consumer-username': 'spoofed-user',
  'x-consumer-custom-id': 'spoofed-custom',
  'x-credential-identifier': 'spoofed-cred',
  'x-anonymous-consumer': 'true',
};

describe.each(['http1', 'undici', 'http-proxy'] as const)('proxy through %s', (forwarder) => {
  let echo: EchoUpstream;
  let gw: RunningDataPlane;
  let snapshot: Snapshot;
  const alice = makeConsumer({ username: 'alice', custom_id: 'alice-42' });

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const dead = await closedPort();
    const base = makeService({ name: 'base', url: `${echo.url}/base` });
    const root = makeService({ name: 'root', url: echo.url });
    const slow = makeService({ name: 'slow', url: echo.url, read_timeout: 300 });
    const down = makeService({ name: 'down', url: `http://127.0.0.1:${dead}` });
    const secured = makeService({ name: 'secured', url: echo.url });
    const routes = [
      makeRoute({ name: 'strip', paths: ['/strip'], service: { id: base.id } }),
      makeRoute({ name: 'keep', paths: ['/keep'], strip_path: false, service: { id: base.id } }),
      makeRoute({ name: 'root', paths: ['/root'], service: { id: root.id } }),
      makeRoute({ name: 'host', paths: ['/host'], preserve_host: true, service: { id: root.id } }),
      makeRoute({ name: 'slow', paths: ['/slow'], service: { id: slow.id } }),
      makeRoute({ name: 'down', paths: ['/down'], service: { id: down.id } }),
      makeRoute({ name: 'nowhere', paths: ['/nowhere'] }),
      makeRoute({ name: 'closed', paths: ['/closed'] }),
      makeRoute({ name: 'secured', paths: ['/secured'], service: { id: secured.id } }),
      makeRoute({ name: 'legacy-api', paths: ['/legacy'], strip_path: true, service: { id: base.id } }),
      makeRoute({ name: 'https-only', paths: ['/tls'], protocols: ['https'], service: { id: root.id } }),
    ];
    const closedRoute = routes.find((r) => r.name === 'closed')!;
    snapshot = makeSnapshot({
      services: [base, root, slow, down, secured],
      routes,
      consumers: [alice],
      plugins: [
        makePlugin({ name: 'key-auth', service: { id: secured.id }, config: { hide_credentials: true } }),
        makePlugin({ name: 'request-termination', route: { id: closedRoute.id }, config: { status_code: 410, message: 'gone' } }),
      ],
      credentials: { keyauth_credentials: [makeCredential(alice, { key: 'alice-key' })] },
    });
    gw = await startDataPlane(snapshot, forwarder);
  });

  afterAll(async () => {
    await gw.close();
    await echo.close();
  });

  it('strips the matched prefix and joins the service path, keeping the query string', async () => {
    const reply = await gw.send('/strip/users?b=2&a=1&b=3');
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ method: 'GET', path: '/base/users', url: '/base/users?b=2&a=1&b=3' });
    expect((await gw.send('/strip')).json.path).toBe('/base');
    expect((await gw.send('/stripped')).json.path).toBe('/base/ped');
    expect((await gw.send('/keep/x')).json.path).toBe('/base/keep/x');
    expect((await gw.send('/root/x')).json.path).toBe('/x');
    expect((await gw.send('/root')).json.path).toBe('/');
    expect((await gw.send('/legacy/v1')).json.path).toBe('/base/v1');
  });

  it('relays the upstream status, headers and body', async () => {
    const reply = await gw.send('/root/x', { headers: { 'x-echo-status': '201' } });
    expect(reply.status).toBe(201);
    expect(reply.headers['x-echo-upstream']).toBe('true');
    expect(reply.headers['content-type']).toBe('application/json');
  });

  it('streams request bodies to the upstream and large responses back', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const reply = await gw.send('/root/upload', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: big });
    expect(reply.status).toBe(200);
    expect(reply.json.method).toBe('POST');
    expect(reply.json.body.length).toBe(big.length);
    const chunked = await gw.send('/root/upload', { method: 'PUT', headers: { 'transfer-encoding': 'chunked' }, body: 'chunk-body' });
    expect(chunked.json.body).toBe('chunk-body');
  });

  it('sends the service host, or the client host with preserve_host', async () => {
    const port = new URL(echo.url).port;
    expect((await gw.send('/root/x', { headers: { host: 'client.test' } })).json.headers.host).toBe(`127.0.0.1:${port}`);
    expect((await gw.send('/host/x', { headers: { host: 'client.test:9999' } })).json.headers.host).toBe('client.test:9999');
  });

  it('sets X-Forwarded-* and X-Real-IP, appending to a client X-Forwarded-For', async () => {
    const { headers } = (await gw.send('/strip/a?q=1', { headers: { host: 'gw.test:8000', 'x-forwarded-for': '203.0.113.9', 'x-forwarded-prefix': '/evil' } })).json;
    expect(headers).toMatchObject({
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'gw.test',
      'x-forwarded-port': String(gw.port),
      'x-forwarded-prefix': '/strip',
      'x-forwarded-path': '/strip/a',
      'x-real-ip': '127.0.0.1',
    });
    expect((await gw.send('/keep/a', { headers: { 'x-forwarded-prefix': '/evil' } })).json.headers['x-forwarded-prefix']).toBeUndefined();
  });

  it('drops hop-by-hop headers and the headers the Connection header names', async () => {
    const { headers } = (await gw.send('/root/x', { headers: { connection: 'keep-alive, x-hop', 'x-hop': '1', 'x-end-to-end': '1', te: 'trailers', 'proxy-connection': 'keep-alive' } })).json;
    expect(headers['x-hop']).toBeUndefined();
    expect(headers.te).toBeUndefined();
    expect(headers['proxy-connection']).toBeUndefined();
    expect(headers['x-end-to-end']).toBe('1');
  });

  it('removes client-supplied identity headers on a route without authentication', async () => {
    const { headers } = (await gw.send('/root/x', { headers: SPOOFED })).json;
    for (const name of Object.keys(SPOOFED)) expect(headers[name]).toBeUndefined();
  });

  it('replaces client-supplied identity headers with the authenticated consumer', async () => {
    const reply = await gw.send('/secured/x?c=1&b=2&apikey=alice-key&a=3', { headers: SPOOFED });
    expect(reply.status).toBe(200);
    expect(reply.json.headers).toMatchObject({
      'x-consumer-id': alice.id,
      'x-consumer-username': 'alice',
      'x-consumer-custom-id': 'alice-42',
    });
    expect(reply.json.headers['x-credential-identifier']).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.json.headers['x-anonymous-consumer']).toBeUndefined();
    // hide_credentials: the key is gone, the other arguments keep their order
    expect(reply.json.url).toBe('/x?c=1&b=2&a=3');
    const viaHeader = await gw.send('/secured/x', { headers: { apikey: 'alice-key' } });
    expect(viaHeader.json.headers.apikey).toBeUndefined();
  });

  it('relays HEAD responses without a body', async () => {
    const reply = await gw.send('/root/x', { method: 'HEAD' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(Number(reply.headers['content-length'])).toBeGreaterThan(0);
  });

  it('answers 426 on plain HTTP for an https-only route', async () => {
    const reply = await gw.send('/tls/x');
    expect(reply.status).toBe(426);
    expect(reply.json).toEqual({ message: 'Please use HTTPS protocol' });
  });

  it('answers 404 when no route matches', async () => {
    const reply = await gw.send('/unknown');
    expect(reply.status).toBe(404);
    expect(reply.json).toEqual({ message: 'no Route matched with those values' });
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers 503 for a route without a service, unless a plugin answers first', async () => {
    const reply = await gw.send('/nowhere');
    expect(reply.status).toBe(503);
    expect(reply.json).toEqual({ message: 'no Service found with those values' });
    const closed = await gw.send('/closed');
    expect(closed.status).toBe(410);
    expect(closed.json).toEqual({ message: 'gone' });
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const reply = await gw.send('/down/x');
    expect(reply.status).toBe(502);
    expect(reply.json).toEqual({ message: 'An invalid response was received from the upstream server' });
    const withBody = await gw.send('/down/x', { method: 'POST', body: 'payload' });
    expect(withBody.status).toBe(502);
  });

  it("answers 504 when the upstream does not answer within the service's read timeout", async () => {
    const reply = await gw.send('/slow/x', { headers: { 'x-echo-delay-ms': '1500' } });
    expect(reply.status).toBe(504);
    expect(reply.json).toEqual({ message: 'The upstream server is timing out' });
    expect((await gw.send('/slow/x', { headers: { 'x-echo-delay-ms': '50' } })).status).toBe(200);
  });

  it('answers plugin refusals in their own shape', async () => {
    const missing = await gw.send('/secured/x');
    expect(missing.status).toBe(403);
    expect(missing.json).toEqual({ message: 'No API key found in headers or querystring' });
    const invalid = await gw.send('/secured/x', { headers: { apikey: 'wrong' } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers['www-authenticate']).toBe('Key realm="gatehouse"');
    const duplicate = await gw.send('/secured/x', { headers: { apikey: ['alice-key', 'alice-key'] } });
    expect(duplicate.status).toBe(401);
    expect(duplicate.json).toEqual({ message: 'Duplicate API key found' });
  });
});
