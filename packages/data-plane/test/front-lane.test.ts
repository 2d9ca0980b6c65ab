// The plain listener's front lane (src/front-lane): simple requests served without node:http's server, everything
// else handed to node:http on the same connection at a request boundary. Raw sockets, so every byte is the test's.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeRoute, makeService, makeSnapshot, startEchoUpstream, waitFor, type EchoUpstream } from '@gatehouse/testkit';
import WebSocket from 'ws';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer } from '../src';
import { quietLog } from './harness';

interface RawReply {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: string;
}

/** A client connection that reads responses one after another (Content-Length, chunked, or to the close). */
class RawClient {
  private readonly socket: Socket;
  private data = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.data = Buffer.concat([this.data, chunk]);
      this.wake?.();
    });
    this.socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
    this.socket.on('error', () => undefined);
  }

  write(text: string): void {
    this.socket.write(text);
  }

  get closed(): boolean {
    return this.ended;
  }

  private async more(): Promise<void> {
    if (this.ended) throw new Error(`connection closed; unread: ${JSON.stringify(this.data.toString('latin1'))}`);
    await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = null;
  }

  /** the next response; `bodyless` for the answer to a HEAD */
  async read(bodyless = false): Promise<RawReply> {
    let end: number;
    while ((end = this.data.indexOf('\r\n\r\n')) < 0) await this.more();
    const head = this.data.subarray(0, end).toString('latin1');
    this.data = this.data.subarray(end + 4);
    const [statusLine, ...lines] = head.split('\r\n');
    const status = Number(statusLine!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    let body = '';
    if (bodyless || status < 200 || status === 204 || status === 304) return { status, head, headers, body };
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      while (this.data.length < length) await this.more();
      body = this.data.subarray(0, length).toString('utf8');
      this.data = this.data.subarray(length);
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = this.data.indexOf('\r\n')) < 0) await this.more();
        const size = parseInt(this.data.subarray(0, lineEnd).toString('latin1'), 16);
        while (this.data.length < lineEnd + 2 + size + 2) await this.more();
        body += this.data.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
        this.data = this.data.subarray(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      while (!this.ended) await this.more();
      body = this.data.toString('utf8');
      this.data = Buffer.alloc(0);
    }
    return { status, head, headers, body };
  }

  /** resolves once the server closed the connection */
  async close(): Promise<void> {
    while (!this.ended) await this.more();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: lane.test\r\n${extra}\r\n`;

describe('front lane', () => {
  let echo: EchoUpstream;
  let dp: DataPlaneServer;
  const clients: RawClient[] = [];
  const client = () => {
    const c = new RawClient(dp.port);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const service = makeService({ name: 'echo', url: echo.url });
    const route = makeRoute({ paths: ['/echo'], service: { id: service.id } });
    const holder = new ConfigHolder(compile(makeSnapshot({ services: [service], routes: [route] })));
    dp = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, log: quietLog, frontLane: true, headersTimeout: 400, connectionsCheckingInterval: 50 });
  });

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await dp?.close();
    await echo?.close();
  });

  it('keeps a connection alive across requests, with Kong headers and Via on each response', async () => {
    const c = client();
    for (const path of ['/echo/one', '/echo/two']) {
      c.write(get(path));
      const reply = await c.read();
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body).path).toBe(path.slice('/echo'.length));
      expect(reply.headers.connection).toBe('keep-alive');
      expect(reply.headers['x-kong-request-id']).toMatch(/^[0-9a-f]+$/);
      expect(reply.headers.via).toMatch(/^1\.1 \S+/);
    }
    expect(c.closed).toBe(false);
  });

  it('answers pipelined requests in order', async () => {
    const c = client();
    c.write(get('/echo/a') + get('/nowhere') + get('/echo/c') + `HEAD /echo/d HTTP/1.1\r\nHost: lane.test\r\n\r\n` + get('/echo/e'));
    expect(JSON.parse((await c.read()).body).path).toBe('/a');
    expect((await c.read()).status).toBe(404);
    expect(JSON.parse((await c.read()).body).path).toBe('/c');
    const head = await c.read(true);
    expect(head.status).toBe(200);
    expect(JSON.parse((await c.read()).body).path).toBe('/e');
  });

  it('keeps the part of a head that came first while other connections are read (reads share one buffer)', async () => {
    const [a, b] = [client(), client()];
    const request = get('/echo/parts');
    a.write(request.slice(0, 20));
    // b's request is read into the buffer a's first part came in, before a's head is complete
    b.write(get('/echo/other'));
    expect(JSON.parse((await b.read()).body).path).toBe('/other');
    a.write(request.slice(20));
    const reply = await a.read();
    expect([reply.status, JSON.parse(reply.body).path]).toEqual([200, '/parts']);
  });

  it('serves HTTP/1.0: closed after the response, or kept with Connection: keep-alive', async () => {
    const kept = client();
    kept.write('GET /echo/ten HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const first = await kept.read();
    expect(first.status).toBe(200);
    expect(first.headers.connection).toBe('keep-alive');
    kept.write('GET /echo/ten HTTP/1.0\r\n\r\n');
    const second = await kept.read();
    expect(second.status).toBe(200);
    expect(second.headers.connection).toBe('close');
    await kept.close();
  });

  it('refuses a forbidden target and a path climbing above / with 400, and closes on Connection: close', async () => {
    const c = client();
    c.write(get('/echo/a\\b') + get('/echo/../../etc', 'Connection: close\r\n'));
    const forbidden = await c.read();
    expect(forbidden.status).toBe(400);
    expect(JSON.parse(forbidden.body)).toEqual({ message: 'Bad request' });
    const climbing = await c.read();
    expect(climbing.status).toBe(400);
    expect(climbing.headers.connection).toBe('close');
    await c.close();
  });

  it('drops client headers with underscores and identity headers before the upstream sees them', async () => {
    const c = client();
    c.write(get('/echo/h', 'x_forwarded_host: evil\r\nX-Consumer-ID: spoof\r\nx-kept: yes\r\n'));
    const echoed = JSON.parse((await c.read()).body);
    expect(echoed.headers['x_forwarded_host']).toBeUndefined();
    expect(echoed.headers['x-consumer-id']).toBeUndefined();
    expect(echoed.headers['x-kept']).toBe('yes');
  });

  it('hands a chunked request to node:http on the same connection, which keeps serving it', async () => {
    const c = client();
    c.write(get('/echo/before'));
    expect((await c.read()).status).toBe(200);
    c.write('POST /echo/body HTTP/1.1\r\nHost: lane.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' + get('/echo/after'));
    const posted = await c.read();
    expect(JSON.parse(posted.body)).toMatchObject({ method: 'POST', path: '/body', body: 'hello' });
    expect(JSON.parse((await c.read()).body).path).toBe('/after');
  });

  it('hands a request with an expectation to node:http, which answers 100 Continue', async () => {
    const c = client();
    c.write(get('/echo/before'));
    await c.read();
    c.write('POST /echo/expect HTTP/1.1\r\nHost: lane.test\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n');
    expect((await c.read()).status).toBe(100);
    c.write('abc');
    expect(JSON.parse((await c.read()).body)).toMatchObject({ method: 'POST', body: 'abc' });
  });

  it('hands an upgrade to node:http after a request the lane served', async () => {
    const c = client();
    c.write(get('/echo/before'));
    await c.read();
    c.write(get('/echo/ws', 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'));
    const switched = await c.read(true);
    expect(switched.status).toBe(101);
    expect(switched.headers.upgrade?.toLowerCase()).toBe('websocket');
  });

  it('closes a connection handed over for an upgrade once its WebSocket is closed on both sides', async () => {
    const before = dp.stats().connections_active;
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${dp.port}/echo/ws`);
      ws.once('message', () => ws.close());
      ws.once('close', () => resolve());
      ws.once('error', reject);
    });
    // the client's end is read even while the relay holds the socket paused
    await waitFor('the upgraded connection to close', () => dp.stats().connections_active === before);
  });

  it('leaves smuggling attempts to node:http: both Content-Length and Transfer-Encoding is a 400', async () => {
    const c = client();
    c.write(get('/echo/before'));
    await c.read();
    c.write('POST /echo/x HTTP/1.1\r\nHost: lane.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expect((await c.read()).status).toBe(400);
    await c.close();
  });

  it('answers 400 to an HTTP/1.1 request without Host, as node:http does', async () => {
    const c = client();
    c.write('GET /echo/x HTTP/1.1\r\n\r\n');
    expect((await c.read()).status).toBe(400);
  });

  it('answers 431 to a head past the size limit', async () => {
    const c = client();
    c.write(get('/echo/big', `x-big: ${'a'.repeat(20_000)}\r\n`));
    expect((await c.read()).status).toBe(431);
  });

  it('answers 408 to a client too slow to send its head, after a first request too', async () => {
    const fresh = client();
    fresh.write('GET /echo/slow HTTP/1.1\r\n');
    const timedOut = await fresh.read();
    expect(timedOut.status).toBe(408);
    expect(JSON.parse(timedOut.body)).toEqual({ message: 'Request timeout' });
    const used = client();
    used.write(get('/echo/first') + 'GET /echo/second HTTP/1.1\r\n');
    expect((await used.read()).status).toBe(200);
    expect((await used.read()).status).toBe(408);
  });

  it('closes its idle keep-alive connections when the data plane closes', async () => {
    const service = makeService({ name: 'echo', url: echo.url });
    const holder = new ConfigHolder(compile(makeSnapshot({ services: [service], routes: [makeRoute({ paths: ['/echo'], service: { id: service.id } })] })));
    const own = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, log: quietLog, frontLane: true });
    const c = new RawClient(own.port);
    clients.push(c);
    c.write(get('/echo/x'));
    expect((await c.read()).headers.connection).toBe('keep-alive');
    await own.close(60_000);
    await c.close();
    expect(c.closed).toBe(true);
  });
});
