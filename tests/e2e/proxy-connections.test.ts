// Proxy connections (kong-reference decisions 31 and 32, lingering close), in both topologies, through real
// processes: HTTP/2's stream limit and rapid-reset guard, request headers within GATEHOUSE_CLIENT_HEADER_TIMEOUT,
// idle connections closed after GATEHOUSE_KEEPALIVE_TIMEOUT (both shortened here), request targets with a raw `\`,
// and refusals that reach clients still writing their body.
import { connect as http2Connect, constants, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { H2, h2Frame, h2RequestBlock, rawHttp2, rawRequest, startEchoUpstream, type EchoUpstream, type RawResponse } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { adminClient, startTopology, TOPOLOGIES, type DataPlaneHandle, type Topology } from './support/topology';

const BODY = 4 * 1024 * 1024;
const portOf = (url: string) => Number(new URL(url).port);

/** A node:http2 session to a data plane's TLS listener, connected. */
async function h2Session(dp: DataPlaneHandle): Promise<ClientHttp2Session> {
  const session = http2Connect(dp.proxyTlsUrl, { rejectUnauthorized: false });
  session.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    session.once('remoteSettings', () => resolve());
    session.once('close', () => reject(new Error('session closed before its settings')));
  });
  return session;
}

/** One HTTP/2 request: status and body. */
function h2Get(session: ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
  });
}

/** Resolves once the server closed `socket` (an HTTP/1.1 connection left idle or unfinished). */
function closedByServer(socket: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

describe.each(TOPOLOGIES)('proxy connections (%s)', (name) => {
  let topology: Topology;
  let echo: EchoUpstream;
  let dp: DataPlaneHandle;

  async function created(admin: ReturnType<typeof adminClient>, path: string, form: Record<string, string | string[]>): Promise<void> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  }

  beforeAll(async () => {
    echo = await startEchoUpstream();
    topology = await startTopology(name, {
      // deadlines short enough for a test, long enough for a TLS handshake on a loaded machine
      dataPlaneEnv: { GATEHOUSE_CLIENT_HEADER_TIMEOUT: '3s', GATEHOUSE_KEEPALIVE_TIMEOUT: '3s', GATEHOUSE_MAX_BUFFERED_BODY: '64k' },
    });
    dp = topology.dataPlanes[0]!;
    const admin = adminClient(topology.adminUrl);
    await created(admin, '/services', { name: 'echo', url: echo.url });
    await created(admin, '/services/echo/routes', { name: 'open', 'paths[]': '/open' });
    await created(admin, '/services/echo/routes', { name: 'locked', 'paths[]': '/locked' });
    await created(admin, '/routes/locked/plugins', { name: 'key-auth' });
    await created(admin, '/services/echo/routes', { name: 'body-key', 'paths[]': '/body-key' });
    await created(admin, '/routes/body-key/plugins', { name: 'key-auth', 'config.key_in_body': 'true' });
    await created(admin, '/services/echo/routes', { name: 'sized', 'paths[]': '/sized' });
    await created(admin, '/routes/sized/plugins', { name: 'request-size-limiting', 'config.allowed_payload_size': '1', 'config.size_unit': 'kilobytes' });
    await topology.converge();
  }, 180_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => echo?.close(),
    );
  });

  describe('HTTP/2 (decision 31)', () => {
    it('allows 128 concurrent streams per connection', async () => {
      const session = await h2Session(dp);
      expect(session.remoteSettings.maxConcurrentStreams).toBe(128);
      expect(await h2Get(session, '/open/x')).toMatchObject({ status: 200 });
      session.destroy();
    });

    it('a connection resetting its streams gets GOAWAY ENHANCE_YOUR_CALM and is closed; another client is answered meanwhile', async () => {
      const attacker = await h2Session(dp);
      const goaway = new Promise<number>((resolve) => attacker.once('goaway', (code: number) => resolve(code)));
      const closed = new Promise<void>((resolve) => attacker.once('close', () => resolve()));
      let waves = 0;
      const attack = (async () => {
        while (!attacker.closed && !attacker.destroyed && waves < 500) {
          const streams = [];
          for (let i = 0; i < 100 && !attacker.closed && !attacker.destroyed; i++) {
            const stream = attacker.request({ ':path': '/open/reset' });
            stream.on('error', () => {});
            streams.push(stream);
          }
          // the HEADERS go out on this turn of the loop, the resets right behind them
          await new Promise((resolve) => setImmediate(resolve));
          for (const stream of streams) stream.close(constants.NGHTTP2_CANCEL);
          waves++;
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      while (waves === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const honest = await h2Session(dp);
      expect(await h2Get(honest, '/open/honest')).toMatchObject({ status: 200 });
      await attack;
      expect(await goaway).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      await closed;
      expect(attacker.destroyed).toBe(true);
      // the data plane goes on serving, on the honest connection and on new ones
      expect(await h2Get(honest, '/open/after')).toMatchObject({ status: 200 });
      honest.destroy();
    });

    it('a connection whose streams have ended is sent GOAWAY and closed after the keep-alive timeout', async () => {
      const session = await h2Session(dp);
      const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
      const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      expect(await h2Get(session, '/open/x')).toMatchObject({ status: 200 });
      expect(await goaway).toBe(constants.NGHTTP2_NO_ERROR);
      await closed;
    });

    it('headers trickling in byte by byte do not hold the connection: GOAWAY and close before they are complete', async () => {
      const connection = await rawHttp2(portOf(dp.proxyTlsUrl));
      const block = h2RequestBlock('/open/slow', { headers: { 'x-padding': 'p'.repeat(120), 'x-more': 'm'.repeat(120) } });
      const frame = h2Frame(H2.HEADERS, H2.END_STREAM | H2.END_HEADERS, 1, block);
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < frame.length && !connection.socket.destroyed) connection.send(frame.subarray(sent, ++sent));
      }, 100);
      try {
        const goaway = await connection.frame((f) => f.type === H2.GOAWAY);
        await connection.closed;
        expect(goaway.payload.readUInt32BE(4)).toBe(constants.NGHTTP2_NO_ERROR);
        expect(sent).toBeLessThan(frame.length);
      } finally {
        clearInterval(drip);
        connection.destroy();
      }
    });

    it('headers trickling in while another stream is open do not hold the connection either', async () => {
      const connection = await rawHttp2(portOf(dp.proxyTlsUrl));
      const held = `/held-${name}`;
      // stream 1: a request the upstream takes its time to answer (it sees the path stripped), so the stream stays open
      connection.send(h2Frame(H2.HEADERS, H2.END_STREAM | H2.END_HEADERS, 1, h2RequestBlock(`/open${held}`, { headers: { 'x-echo-delay-ms': '30000' } })));
      while (!echo.received.some((r) => r.path === held)) await new Promise((resolve) => setTimeout(resolve, 20));
      const block = h2RequestBlock('/open/slow', { headers: { 'x-padding': 'p'.repeat(120), 'x-more': 'm'.repeat(120) } });
      const frame = h2Frame(H2.HEADERS, H2.END_STREAM | H2.END_HEADERS, 3, block);
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < frame.length && !connection.socket.destroyed) connection.send(frame.subarray(sent, ++sent));
      }, 100);
      try {
        const goaway = await connection.frame((f) => f.type === H2.GOAWAY, 45_000);
        await connection.closed;
        expect(goaway.payload.readUInt32BE(4)).toBe(constants.NGHTTP2_NO_ERROR);
        expect(sent).toBeLessThan(frame.length);
        // stream 1 was never answered: the connection went down with it
        expect(connection.frames.some((f) => f.stream === 1 && f.type === H2.HEADERS)).toBe(false);
      } finally {
        clearInterval(drip);
        connection.destroy();
      }
    });

    it('a raw `\\` in :path answers 400 and reaches no upstream; a space is refused by the HTTP/2 layer', async () => {
      const before = echo.received.length;
      const session = await h2Session(dp);
      const res = await h2Get(session, '/open\\private/secret');
      expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Bad request' }]);
      session.destroy();
      const connection = await rawHttp2(portOf(dp.proxyTlsUrl));
      connection.send(h2Frame(H2.HEADERS, H2.END_STREAM | H2.END_HEADERS, 1, h2RequestBlock('/open/a b')));
      const reset = await connection.frame((f) => f.stream === 1 && (f.type === H2.RST_STREAM || f.type === H2.HEADERS));
      expect([reset.type, reset.payload.readUInt32BE(0)]).toEqual([H2.RST_STREAM, constants.NGHTTP2_PROTOCOL_ERROR]);
      connection.destroy();
      expect(echo.received.length).toBe(before);
    });
  });

  describe('HTTP/1.1 deadlines (decision 31)', () => {
    it('clients too slow to send their headers get 408 and are closed, and never delay another client', async () => {
      const slow = Array.from({ length: 20 }, () =>
        rawRequest(portOf(dp.proxyUrl), { head: 'GET /open/slow HTTP/1.1\r\nhost: gw.test', unfinishedHead: true, timeoutMs: 30_000 }),
      );
      const other = await rawRequest(portOf(dp.proxyUrl), { head: 'GET /open/other HTTP/1.1\r\nhost: gw.test\r\nconnection: close' });
      expect(other.status).toBe(200);
      for (const answer of await Promise.all(slow)) {
        expect([answer.status, JSON.parse(answer.body), answer.headers.connection]).toEqual([408, { message: 'Request timeout' }, 'close']);
      }
    });

    it('over TLS too: a slow HTTP/1.1 client gets 408', async () => {
      const socket = tlsConnect({ host: '127.0.0.1', port: portOf(dp.proxyTlsUrl), rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
      socket.on('error', () => {});
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.once('secureConnect', () => socket.write('GET /open/slow HTTP/1.1\r\nhost: gw.test\r\n'));
      await closedByServer(socket);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(received.endsWith('{"message":"Request timeout"}')).toBe(true);
    });

    it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
      const socket = netConnect(portOf(dp.proxyUrl), '127.0.0.1');
      socket.on('error', () => {});
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.write('GET /open/keep HTTP/1.1\r\nhost: gw.test\r\n\r\n');
      await closedByServer(socket);
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
    });
  });

  describe('request targets (decision 32)', () => {
    it('a raw `\\` in the target answers 400 on every data plane and reaches no upstream; %5C does not', async () => {
      const before = echo.received.length;
      for (const plane of topology.dataPlanes) {
        for (const target of ['/open\\private/secret', '/open/x?q=a\\b']) {
          const res = await rawRequest(portOf(plane.proxyUrl), { head: `GET ${target} HTTP/1.1\r\nhost: gw.test\r\nconnection: close` });
          expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Bad request' }]);
        }
      }
      expect(echo.received.length).toBe(before);
      const escaped = await rawRequest(portOf(dp.proxyUrl), { head: 'GET /open/a%5Cb HTTP/1.1\r\nhost: gw.test\r\nconnection: close' });
      expect(escaped.status).toBe(200);
    });

    it('control characters and spaces answer 400', async () => {
      for (const target of ['/open/a\x01b', '/open/a b', '/open/a\x7fb']) {
        const res = await rawRequest(portOf(dp.proxyUrl), { head: `GET ${target} HTTP/1.1\r\nhost: gw.test\r\nconnection: close` });
        expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Bad request' }]);
      }
    });
  });

  describe('refusals reach a client still writing its body (lingering close)', () => {
    /** a `Connection: close` request whose client writes its whole body before it reads */
    const closing = (plane: DataPlaneHandle, head: string, chunked = false): Promise<RawResponse> =>
      rawRequest(portOf(plane.proxyUrl), { head: `${head}\r\nhost: gw.test\r\nconnection: close`, bodyBytes: BODY, chunked, wholeBodyFirst: true, timeoutMs: 60_000 });

    it('413 past GATEHOUSE_MAX_BUFFERED_BODY', async () => {
      for (const plane of topology.dataPlanes) {
        const res = await closing(plane, `POST /body-key/x HTTP/1.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${BODY}`);
        expect([res.status, JSON.parse(res.body), res.bodyBytesSent]).toEqual([413, { message: 'Request size limit exceeded' }, BODY]);
      }
    });

    it("request-size-limiting's 413, for a declared length and for a chunked body", async () => {
      const declared = await closing(dp, `POST /sized/x HTTP/1.1\r\ncontent-length: ${BODY}`);
      expect([declared.status, JSON.parse(declared.body), declared.bodyBytesSent]).toEqual([413, { message: 'Request size limit exceeded' }, BODY]);
      // a chunked body has no length to refuse at once: it is counted as it streams and refused past the limit
      const unsized = await closing(dp, 'POST /sized/x HTTP/1.1\r\ntransfer-encoding: chunked', true);
      expect([unsized.status, JSON.parse(unsized.body), unsized.bodyBytesSent]).toEqual([413, { message: 'Request size limit exceeded' }, BODY]);
    });

    it('an authentication refusal while the body is in flight', async () => {
      const res = await closing(dp, `POST /locked/x HTTP/1.1\r\ncontent-length: ${BODY}`);
      expect([res.status, JSON.parse(res.body), res.bodyBytesSent]).toEqual([403, { message: 'No API key found in headers or querystring' }, BODY]);
    });

    it('on a keep-alive connection too', async () => {
      const res = await rawRequest(portOf(dp.proxyUrl), { head: `POST /locked/x HTTP/1.1\r\nhost: gw.test\r\ncontent-length: ${BODY}`, bodyBytes: BODY, wholeBodyFirst: true });
      expect([res.status, res.bodyBytesSent]).toEqual([403, BODY]);
    });
  });
});
