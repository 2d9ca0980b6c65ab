// Kong's router and the proxy's forwarding (kong-reference 5.2-5.4), through real processes in both topologies.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { freePort, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, waitUntil, withHost } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

describe.each(TOPOLOGIES)('routing and proxying (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let proxyPort: string;
  let duplexUpstream: Server;

  const get = (path: string, init: RequestInit = {}) => proxied(`${topology.proxyUrl}${path}`, init);
  /** the upstream path (and query) a request arrived with, asserted equal on every data plane */
  const upstreamUrlOf = async (path: string, host?: string) => {
    const urls: string[] = [];
    for (const dp of topology.dataPlanes) {
      const res = host ? await withHost(`${dp.proxyUrl}${path}`, host) : await proxied(`${dp.proxyUrl}${path}`);
      if (res.status !== 200) throw new Error(`${path} (host ${host ?? '-'}) → ${res.status} ${JSON.stringify(res.body)}`);
      urls.push(res.body.url);
    }
    expect(new Set(urls).size).toBe(1);
    return urls[0]!;
  };

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** a service whose path names it, so the upstream path shows which route matched */
  async function service(label: string, path = `/${label}`, extra: Record<string, string> = {}) {
    await created('/services/', { name: label, url: `${upstream.url}${path}`, ...extra });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);
    proxyPort = new URL(topology.proxyUrl).port;

    // strip_path and service path joining (kong-reference 5.3 examples)
    await service('root', '');
    await created('/services/root/routes', { name: 'foo', 'paths[]': '/foo' });
    await service('s', '/s');
    await created('/services/s/routes', { name: 'sfoo', 'paths[]': '/sfoo' });
    await created('/services/s/routes', { name: 'keep', 'paths[]': '/keep', strip_path: 'false' });
    await service('slash', '/');
    await created('/services/slash/routes', { name: 'keep-root', 'paths[]': '/keeproot', strip_path: 'false' });
    // longest prefix wins
    await service('short');
    await created('/services/short/routes', { 'paths[]': '/lp' });
    await service('long');
    await created('/services/long/routes', { 'paths[]': '/lp/deeper' });
    // host + path beats a longer path alone
    await service('pathonly');
    await created('/services/pathonly/routes', { 'paths[]': '/hp/longer' });
    await service('hostpath');
    await created('/services/hostpath/routes', { 'hosts[]': 'api.example.test', 'paths[]': '/hp' });
    // hosts alone, plain and wildcard
    await service('plainhost');
    await created('/services/plainhost/routes', { 'hosts[]': 'h1.example.test' });
    await service('wildhost');
    await created('/services/wildhost/routes', { 'hosts[]': '*.wild.test' });
    // methods
    await service('puts');
    await created('/services/puts/routes', { 'methods[]': 'PUT', 'paths[]': '/meth' });
    // preserve_host
    await service('preserved', '');
    await created('/services/preserved/routes', { 'paths[]': '/ph', preserve_host: 'true' });
    // an upstream that answers as the body arrives (echo answers only once the body is complete)
    duplexUpstream = createServer((req, res) => {
      req.once('data', (first: Buffer) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(`got:${first.toString()}`);
        req.on('data', (more: Buffer) => res.write(more));
        req.on('end', () => res.end());
      });
    });
    await new Promise<void>((resolve) => duplexUpstream.listen(0, '127.0.0.1', resolve));
    await created('/services/', { name: 'duplex', url: `http://127.0.0.1:${(duplexUpstream.address() as AddressInfo).port}` });
    // both ways unbuffered: with Kong's default (buffering on) the upstream sees the body only once it is whole
    await created('/services/duplex/routes', { 'paths[]': '/duplex', request_buffering: 'false', response_buffering: 'false' });
    // gateway answers
    await created('/routes', { name: 'no-service', 'paths[]': '/nosvc' });
    const closed = await freePort();
    await created('/services/', { name: 'down', url: `http://127.0.0.1:${closed}/` });
    await created('/services/down/routes', { 'paths[]': '/down' });
    // `.invalid` names never resolve (RFC 6761): the system's resolver answers that the name does not exist
    await created('/services/', { name: 'unresolvable', url: 'http://nothing-here.invalid/' });
    await created('/services/unresolvable/routes', { 'paths[]': '/unresolvable' });
    await created('/services/', { name: 'slow', url: upstream.url, read_timeout: '300' });
    await created('/services/slow/routes', { 'paths[]': '/slow' });
    // legacy /apis
    await created('/apis', { name: 'legacy', uris: '/legacy', upstream_url: `${upstream.url}/base` });
    await created('/apis', { name: 'legacy-keep', uris: '/legacykeep', upstream_url: `${upstream.url}/base`, strip_uri: 'false' });
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      () => {
        duplexUpstream?.closeAllConnections();
        return new Promise((r) => (duplexUpstream ? duplexUpstream.close(r) : r(undefined)));
      },
    );
  });

  describe('matching', () => {
    it('path prefixes are raw string prefixes; strip_path removes the matched prefix (service without path)', async () => {
      expect(await upstreamUrlOf('/foo/bar')).toBe('/bar');
      expect(await upstreamUrlOf('/foo')).toBe('/');
      expect(await upstreamUrlOf('/foobar')).toBe('/bar');
    });

    it('service path /s: the remainder is joined to it; strip_path=false sends the full request path after it', async () => {
      expect(await upstreamUrlOf('/sfoo/bar')).toBe('/s/bar');
      expect(await upstreamUrlOf('/sfoo')).toBe('/s');
      expect(await upstreamUrlOf('/keep/x')).toBe('/s/keep/x');
      expect(await upstreamUrlOf('/keeproot/x')).toBe('/keeproot/x');
    });

    it('the longest prefix wins', async () => {
      expect(await upstreamUrlOf('/lp/deeper/x')).toBe('/long/x');
      expect(await upstreamUrlOf('/lp/other')).toBe('/short/other');
      expect(await upstreamUrlOf('/lp')).toBe('/short');
    });

    it('host + path beats a longer path alone', async () => {
      expect(await upstreamUrlOf('/hp/longer/x', 'api.example.test')).toBe('/hostpath/longer/x');
      expect(await upstreamUrlOf('/hp/longer/x', `api.example.test:${proxyPort}`)).toBe('/hostpath/longer/x');
      expect(await upstreamUrlOf('/hp/longer/x')).toBe('/pathonly/x');
      expect((await withHost(`${topology.proxyUrl}/hp/other`, 'elsewhere.test')).status).toBe(404);
    });

    it('hosts: plain and wildcard', async () => {
      expect(await upstreamUrlOf('/any/path', 'h1.example.test')).toBe('/plainhost/any/path');
      expect(await upstreamUrlOf('/p', 'a.wild.test')).toBe('/wildhost/p');
      expect(await upstreamUrlOf('/p', 'deep.a.wild.test')).toBe('/wildhost/p');
      expect((await withHost(`${topology.proxyUrl}/p`, 'wild.test')).status).toBe(404);
    });

    it('methods', async () => {
      const put = await get('/meth/x', { method: 'PUT', body: 'payload' });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ method: 'PUT', path: '/puts/x', body: 'payload' });
      const other = await get('/meth/x');
      expect(other.status).toBe(404);
      expect(other.body).toEqual({ message: 'no Route matched with those values' });
    });
  });

  describe('forwarding', () => {
    it('keeps the query string as sent', async () => {
      const res = await get('/foo/q?a=1&b=two%20words&a=3&empty=&flag');
      expect(res.status).toBe(200);
      expect(res.body.url).toBe('/q?a=1&b=two%20words&a=3&empty=&flag');
      expect(res.body.query).toEqual({ a: ['1', '3'], b: 'two words', empty: '', flag: '' });
    });

    it('sets Host to the service host unless preserve_host', async () => {
      const plain = await withHost(`${topology.proxyUrl}/foo`, 'client.example.test');
      expect(plain.body.headers.host).toBe(`127.0.0.1:${upstream.port}`);
      const preserved = await withHost(`${topology.proxyUrl}/ph/x`, 'client.example.test:8443');
      expect(preserved.status).toBe(200);
      expect(preserved.body.headers.host).toBe('client.example.test:8443');
    });

    it('sets X-Forwarded-* and X-Real-IP, replacing what the client sent', async () => {
      const res = await get('/foo/fwd', {
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test', 'x-forwarded-prefix': '/evil', 'x-real-ip': '10.9.9.9' },
      });
      expect(res.body.headers).toMatchObject({
        'x-forwarded-proto': 'http',
        'x-forwarded-host': '127.0.0.1',
        'x-forwarded-port': proxyPort,
        'x-forwarded-path': '/foo/fwd',
        'x-forwarded-prefix': '/foo',
        'x-real-ip': '127.0.0.1',
      });
      expect(res.body.headers['x-forwarded-for']).toMatch(/(^|, )127\.0\.0\.1$/);
      const unstripped = await get('/keep/fwd');
      expect(unstripped.body.headers['x-forwarded-prefix']).toBeUndefined();
    });

    it('removes client-supplied identity headers on a route without any authentication plugin', async () => {
      const res = await get('/foo/identity', {
        headers: {
          'x-consumer-id': 'forged-id',
          'x-consumer-username': 'forged',
          'x-consumer-custom-id': 'forged',
          'x-credential-identifier': 'forged',
          'x-anonymous-consumer': 'true',
          'x-kept': 'kept',
        },
      });
      expect(res.status).toBe(200);
      for (const header of ['x-consumer-id', 'x-consumer-username', 'x-consumer-custom-id', 'x-credential-identifier', 'x-anonymous-consumer']) {
        expect(res.body.headers[header]).toBeUndefined();
      }
      expect(res.body.headers['x-kept']).toBe('kept');
    });

    it('streams a POST body to the upstream, chunked or with a length, and the upstream status back', async () => {
      const big = 'x'.repeat(256 * 1024) + 'end';
      const sized = await get('/foo/upload', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: big });
      expect(sized.status).toBe(200);
      expect(sized.body.body).toBe(big);
      expect(sized.body.headers['content-length']).toBe(String(big.length));

      const parts = ['first-', 'second-', 'third'];
      const stream = Readable.toWeb(Readable.from(parts.map((p) => Buffer.from(p)))) as ReadableStream;
      const chunked = await get('/foo/stream', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
      expect(chunked.status).toBe(200);
      expect(chunked.body.body).toBe('first-second-third');

      const status = await get('/foo/status', { method: 'POST', body: 'b', headers: { 'x-echo-status': '418' } });
      expect(status.status).toBe(418);
      expect(status.headers.get('x-echo-upstream')).toBe('true');
    });

    it('streams both ways: the upstream sees the first part of a body before the client sends the rest', async () => {
      const req = httpRequest(`${topology.proxyUrl}/duplex/x`, { method: 'POST', headers: { 'content-type': 'text/plain' } });
      req.flushHeaders();
      req.write('part-1;');
      const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        req.once('response', resolve);
        req.once('error', reject);
      });
      expect(res.statusCode).toBe(200);
      let received = '';
      res.on('data', (c: Buffer) => (received += c.toString()));
      const ended = new Promise((r) => res.once('end', r));
      // the upstream answered part 1 while the request body is still open
      await waitUntil('the upstream to answer the first part', () => received.includes('got:part-1;'), 5000, 10);
      expect(received).toBe('got:part-1;');
      req.end('part-2');
      await ended;
      expect(received).toBe('got:part-1;part-2');
    });

    it('carries a WebSocket upgrade to the upstream', async () => {
      const socket = new WebSocket(`${topology.proxyUrl.replace('http', 'ws')}/foo/ws?room=1`, { headers: { 'x-consumer-id': 'forged' } });
      const messages: string[] = [];
      const nextMessage = () =>
        new Promise<string>((resolve, reject) => {
          socket.once('message', (data) => resolve(data.toString()));
          socket.once('error', reject);
        });
      const first = nextMessage();
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      const handshake = JSON.parse(await first);
      expect(handshake.url).toBe('/ws?room=1');
      expect(handshake.headers.upgrade).toBe('websocket');
      expect(handshake.headers['x-consumer-id']).toBeUndefined();
      for (const text of ['hello', 'world']) {
        const echoed = nextMessage();
        socket.send(text);
        messages.push(await echoed);
      }
      expect(messages).toEqual(['hello', 'world']);
      socket.close();
    });
  });

  describe('gateway answers', () => {
    it('404 when no route matches', async () => {
      const res = await get('/nothing/here');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'no Route matched with those values' });
    });

    it('503 for a route without a service', async () => {
      const res = await get('/nosvc');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'no Service found with those values' });
    });

    it('502 when nothing listens at the upstream', async () => {
      const res = await get('/down/x');
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ message: 'An invalid response was received from the upstream server' });
    });

    it('503 name resolution failed when the service host has no address, as Kong\'s balancer answers', async () => {
      const res = await get('/unresolvable/x');
      expect([res.status, res.body]).toEqual([503, { message: 'name resolution failed' }]);
    });

    it('504 when the upstream answers after the service read_timeout, 200 within it', async () => {
      const late = await get('/slow', { headers: { 'x-echo-delay-ms': '1500' } });
      expect(late.status).toBe(504);
      expect(late.body).toEqual({ message: 'The upstream server is timing out' });
      const inTime = await get('/slow', { headers: { 'x-echo-delay-ms': '20' } });
      expect(inTime.status).toBe(200);
    });
  });

  describe('legacy /apis', () => {
    it('an API created with name, uris, upstream_url is proxied, uris stripped by default', async () => {
      expect(await upstreamUrlOf('/legacy/x?q=1')).toBe('/base/x?q=1');
      expect(await upstreamUrlOf('/legacy')).toBe('/base');
    });

    it('strip_uri=false keeps the request path after the upstream_url path', async () => {
      expect(await upstreamUrlOf('/legacykeep/x')).toBe('/base/legacykeep/x');
    });

    it('plugins added at /apis/{api}/plugins apply to the proxied API', async () => {
      expect((await admin.post('/apis/legacy/plugins/', { name: 'key-auth' })).status).toBe(201);
      await topology.converge();
      const res = await get('/legacy/x');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'No API key found in headers or querystring' });
      expect((await get('/legacykeep/x')).status).toBe(200);
    });
  });
});
