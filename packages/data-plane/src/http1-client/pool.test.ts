import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { UpstreamHandler } from '../proxy/response-relay';
import { latin1, type RawHeader } from '../proxy/response-interception';
import { Http1Pool } from './pool';
import { requestHead } from './request-head';

interface Outcome {
  status: number;
  headers: Record<string, string>;
  body: string;
  error: (Error & { code?: string }) | null;
}

/** Collects one exchange as the client reports it. */
class Recorder implements UpstreamHandler {
  readonly outcome: Outcome = { status: 0, headers: {}, body: '', error: null };
  readonly done: Promise<Outcome>;
  private finish!: (outcome: Outcome) => void;
  constructor() {
    this.done = new Promise((resolve) => (this.finish = resolve));
  }
  /** the exchange's abort, as the client handed it over */
  abort: ((err?: Error) => void) | null = null;
  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
  }
  onHeaders(status: number, raw: readonly RawHeader[]): boolean {
    this.outcome.status = status;
    for (let i = 0; i < raw.length; i += 2) this.outcome.headers[latin1(raw[i]!).toLowerCase()] = latin1(raw[i + 1]!);
    return true;
  }
  onData(chunk: Buffer): boolean {
    this.outcome.body += chunk.toString();
    return true;
  }
  onComplete(): void {
    this.finish(this.outcome);
  }
  onError(err: Error): void {
    this.outcome.error = err;
    this.finish(this.outcome);
  }
}

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A plain TCP server that hands each request head to `answer`, with the socket and the request's number on it. */
async function rawUpstream(answer: (socket: Socket, head: string, nth: number, connection: number) => void): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    const connection = ++connections;
    let buffered = '';
    let nth = 0;
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) >= 0) {
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        buffered = buffered.slice(end + 4 + length);
        answer(socket, head, ++nth, connection);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => sockets.add(socket));
  closers.push(() => sockets.forEach((s) => s.destroy()));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

function poolTo(port: number, keepAliveTimeout = 4_000): Http1Pool {
  const pool = new Http1Pool({ host: '127.0.0.1', port, connectTimeout: 2_000 }, keepAliveTimeout);
  closers.push(() => pool.destroy());
  return pool;
}

function send(pool: Http1Pool, method = 'GET', path = '/', readTimeout = 5_000, body: Buffer | null = null): Promise<Outcome> {
  const recorder = new Recorder();
  pool.request(requestHead(method, path, {}, body, 'upstream.test', readTimeout)!, recorder);
  return recorder.done;
}

const ok = (body: string, extra = '') => `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

describe('the HTTP/1.1 upstream client', () => {
  it('keeps the connection alive across requests to a node:http server, bodies whole', async () => {
    const server: HttpServer = createHttpServer((req, res) => res.end(`you asked ${req.url}`));
    let connections = 0;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    closers.push(() => server.closeAllConnections());
    const pool = poolTo((server.address() as AddressInfo).port);
    for (const path of ['/one', '/two', '/three']) {
      const outcome = await send(pool, 'GET', path);
      expect([outcome.status, outcome.body, outcome.error]).toEqual([200, `you asked ${path}`, null]);
    }
    expect(connections).toBe(1);
    expect(pool.size).toBe(1);
  });

  it('hands the handler body chunks of its own: chunks kept while other connections read stay as they came', async () => {
    // the connections read into one buffer of the process; a handler that keeps chunks (a slow client's queued
    // writes) must not see them overwritten by the next read, on its connection or another
    const upstream = await rawUpstream((socket, head) => {
      const letter = /GET \/(\w)/.exec(head)![1]!;
      const body = letter.repeat(100_000);
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`);
      // the body in parts, so that reads of the three connections interleave
      let at = 0;
      const next = (): void => {
        if (at >= body.length) return;
        socket.write(body.slice(at, (at += 7_000)));
        setImmediate(next);
      };
      next();
    });
    const kept = new Map<string, Buffer[]>();
    const exchanges = ['a', 'b', 'c'].map((letter) => {
      const chunks: Buffer[] = [];
      kept.set(letter, chunks);
      const recorder = new Recorder();
      recorder.onData = (chunk: Buffer) => (chunks.push(chunk), true);
      poolTo(upstream.port).request(requestHead('GET', `/${letter}`, {}, null, 'upstream.test', 5_000)!, recorder);
      return recorder.done;
    });
    for (const outcome of await Promise.all(exchanges)) expect([outcome.status, outcome.error]).toEqual([200, null]);
    for (const [letter, chunks] of kept) {
      expect(chunks.length).toBeGreaterThan(1);
      expect(Buffer.concat(chunks).toString()).toBe(letter.repeat(100_000));
    }
  });

  it('relays a chunked body as it comes, then reuses the connection', async () => {
    const upstream = await rawUpstream((socket, _head, nth) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n');
      setImmediate(() => socket.write(`6\r\n world\r\n2\r\n ${nth}\r\n0\r\n\r\n`));
    });
    const pool = poolTo(upstream.port);
    expect((await send(pool)).body).toBe('hello world 1');
    expect((await send(pool)).body).toBe('hello world 2');
    expect(upstream.connections()).toBe(1);
  });

  it('sends an idempotent request once more on a new connection when a kept-alive one was closed under it', async () => {
    const upstream = await rawUpstream((socket, _head, nth) => {
      // the upstream closes its kept-alive connection as the second request arrives, unanswered
      if (nth === 2) socket.destroy();
      else socket.write(ok(`answer ${nth}`));
    });
    const pool = poolTo(upstream.port);
    expect((await send(pool)).body).toBe('answer 1');
    const again = await send(pool, 'PUT', '/', 5_000, Buffer.from('x'));
    expect([again.status, again.body, again.error]).toEqual([200, 'answer 1', null]);
    expect(upstream.connections()).toBe(2);
  });

  it('does not send a POST again: the exchange fails with a connection error', async () => {
    const upstream = await rawUpstream((socket, _head, nth) => (nth === 2 ? socket.destroy() : socket.write(ok('first'))));
    const pool = poolTo(upstream.port);
    await send(pool);
    const lost = await send(pool, 'POST', '/', 5_000, Buffer.from('x'));
    expect(lost.error?.code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|EPIPE)$/);
    expect(upstream.connections()).toBe(1);
  });

  it('sends a request once more at most', async () => {
    const upstream = await rawUpstream((socket, _head, nth, connection) => (connection === 1 && nth === 1 ? socket.write(ok('first')) : socket.destroy()));
    const pool = poolTo(upstream.port);
    await send(pool);
    expect((await send(pool)).error?.code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|EPIPE)$/);
    expect(upstream.connections()).toBe(2);
  });

  it.each([
    ['both Content-Length and Transfer-Encoding', 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
    ['a Content-Length that is not a number', 'HTTP/1.1 200 OK\r\ncontent-length: 5x\r\n\r\nhello'],
    ['two different Content-Lengths', 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello'],
    ['a header line without CR', 'HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\n\r\n'],
    ['a status line that is not HTTP', 'HTTP/1.1 2000 OK\r\n\r\n'],
    ['an upgrade nobody asked for', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'],
  ])('refuses a response with %s, and does not reuse its connection', async (_name, response) => {
    const upstream = await rawUpstream((socket, _head, _nth, connection) => socket.write(connection === 1 ? response : ok('fine')));
    const pool = poolTo(upstream.port);
    const refused = await send(pool);
    expect(refused.error).not.toBeNull();
    expect(refused.error?.code).not.toBe('UND_ERR_HEADERS_TIMEOUT');
    expect((await send(pool)).body).toBe('fine');
    expect(upstream.connections()).toBe(2);
  });

  it('does not reuse a connection on which the upstream answered more than it was asked', async () => {
    const upstream = await rawUpstream((socket, _head, _nth, connection) => socket.write(connection === 1 ? ok('one') + ok('smuggled') : ok('two')));
    const pool = poolTo(upstream.port);
    expect((await send(pool)).body).toBe('one');
    expect((await send(pool)).body).toBe('two');
    expect(upstream.connections()).toBe(2);
  });

  it('skips interim responses and reads a body that runs to the end of the connection', async () => {
    const upstream = await rawUpstream((socket) => socket.end('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end'));
    const pool = poolTo(upstream.port);
    const outcome = await send(pool);
    expect([outcome.status, outcome.body, outcome.error]).toEqual([200, 'until the end', null]);
  });

  it('reads a Content-Length body that comes with its head, after it, or with the end of a head in parts', async () => {
    const upstream = await rawUpstream((socket, head) => {
      const path = /GET (\S+)/.exec(head)![1]!;
      if (path === '/together') socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\ntogether');
      if (path === '/after') {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n');
        setTimeout(() => socket.write('after'), 20);
        setTimeout(() => socket.write(' head'), 40);
      }
      if (path === '/parted') {
        socket.write('HTTP/1.1 200 OK\r\ncontent-');
        setTimeout(() => socket.write('length: 6\r\n\r\nparted'), 20);
      }
    });
    const pool = poolTo(upstream.port);
    for (const path of ['/together', '/after', '/parted']) {
      const outcome = await send(pool, 'GET', path);
      expect([outcome.status, outcome.body, outcome.error]).toEqual([200, path.slice(1).replace('after', 'after head'), null]);
    }
    expect(upstream.connections()).toBe(1);
  });

  it('reads no body after a 204 or 304 whatever its Content-Length says, and keeps the connection', async () => {
    const upstream = await rawUpstream((socket, _head, nth) => {
      if (nth === 1) socket.write('HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n');
      else if (nth === 2) socket.write('HTTP/1.1 204 No Content\r\ncontent-length: 7\r\n\r\n');
      else socket.write(ok('third'));
    });
    const pool = poolTo(upstream.port);
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await send(pool);
      answers.push([outcome.status, outcome.body, outcome.error]);
    }
    expect(answers).toEqual([
      [304, '', null],
      [204, '', null],
      [200, 'third', null],
    ]);
    expect(upstream.connections()).toBe(1);
  });

  it('refuses a response whose Content-Length is doubled or comes with Transfer-Encoding, and does not reuse it', async () => {
    const upstream = await rawUpstream((socket, head) => {
      if (head.startsWith('GET /double')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc');
      else if (head.startsWith('GET /both')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
      else socket.write(ok('fine'));
    });
    const pool = poolTo(upstream.port);
    expect((await send(pool, 'GET', '/double')).error?.code).toBe('HPE_UNEXPECTED_CONTENT_LENGTH');
    expect((await send(pool, 'GET', '/both')).error?.code).toBe('HPE_INVALID_TRANSFER_ENCODING');
    expect((await send(pool)).body).toBe('fine');
    expect(upstream.connections()).toBe(3);
  });

  it('fails a response cut short, and one that does not come in time', async () => {
    const upstream = await rawUpstream((socket, head) => {
      if (head.startsWith('GET /cut')) socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
    });
    const pool = poolTo(upstream.port);
    expect((await send(pool, 'GET', '/cut')).error?.code).toBe('UND_ERR_SOCKET');
    expect((await send(pool, 'GET', '/silent', 100)).error?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
  });

  it('closes idle connections after the keep-alive time', async () => {
    const upstream = await rawUpstream((socket) => socket.write(ok('x')));
    const pool = poolTo(upstream.port, 50);
    await send(pool);
    expect(pool.size).toBe(1);
    const start = Date.now();
    while (pool.size > 0 && Date.now() - start < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pool.size).toBe(0);
  });

  it('sends nothing of a request aborted in the turn it was made (its bytes wait for the end of the turn)', async () => {
    const heads: string[] = [];
    const upstream = await rawUpstream((socket, head) => {
      heads.push(head.split('\r\n')[0]!);
      socket.write(ok('fine'));
    });
    const pool = poolTo(upstream.port);
    // a kept-alive connection, open when the next request is made on it
    expect((await send(pool, 'GET', '/first')).status).toBe(200);
    const recorder = new Recorder();
    pool.request(requestHead('GET', '/left', {}, null, 'upstream.test', 5_000)!, recorder);
    recorder.abort!();
    expect((await recorder.done).error?.message).toBe('request aborted');
    const next = await send(pool, 'GET', '/next');
    expect([next.status, next.body]).toEqual([200, 'fine']);
    expect(heads).toEqual(['GET /first HTTP/1.1', 'GET /next HTTP/1.1']);
  });

  it('keeps a connection no longer than the upstream names, less two seconds (as undici)', async () => {
    const upstream = await rawUpstream((socket, head) => socket.write(ok('x', `keep-alive: timeout=${head.includes('/short') ? 1 : 5}\r\n`)));
    const pool = poolTo(upstream.port);
    await send(pool, 'GET', '/long');
    expect(pool.size).toBe(1);
    await send(pool, 'GET', '/short');
    const start = Date.now();
    while (pool.size > 0 && Date.now() - start < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pool.size).toBe(0);
    expect(upstream.connections()).toBe(1);
  });
});
