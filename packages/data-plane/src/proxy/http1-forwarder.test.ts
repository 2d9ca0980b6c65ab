import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { UpstreamTarget } from '../compile/types';
import { Http1Forwarder } from './http1-forwarder';
import type { UpstreamRequest } from './upstream-request';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function listening<T extends Server | HttpServer>(server: T): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => sockets.add(socket));
  closers.push(() => sockets.forEach((s) => s.destroy()));
  closers.push(() => server.close());
  return (server.address() as AddressInfo).port;
}

function target(port: number, readTimeout = 5_000): UpstreamTarget {
  const origin = `http://127.0.0.1:${port}`;
  return { poolKey: origin, origin, protocol: 'http', host: '127.0.0.1', port, hostHeader: `127.0.0.1:${port}`, basePath: '/', connectTimeout: 2_000, readTimeout, writeTimeout: 5_000, tlsVerify: false, balancer: null, tls: null };
}

/** A gateway in miniature: node:http in front, every request forwarded as it came to `upstream`. */
async function gateway(upstream: UpstreamTarget, body: (req: IncomingMessage) => UpstreamRequest['body'] = () => null): Promise<number> {
  const forwarder = new Http1Forwarder();
  closers.push(() => forwarder.close());
  const front = createHttpServer((req, res) => {
    const request: UpstreamRequest = { target: upstream, method: req.method!, path: req.url!, headers: { 'x-test': 'yes' }, body: body(req), upgrade: false, responseHeaders: null, onResponse: null };
    forwarder.forward(req, res, request);
  });
  return listening(front);
}

function get(port: number, path = '/', method = 'GET', body?: string): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('forwarding over the HTTP/1.1 client', () => {
  it('relays status, headers and body, without the hop-by-hop headers', async () => {
    const upstream = createHttpServer((req, res) => {
      res.setHeader('keep-alive', 'timeout=5');
      res.setHeader('x-saw', `${req.headers['x-test']} ${req.headers.connection}`);
      res.end('hello');
    });
    const port = await gateway(target(await listening(upstream)));
    const answer = await get(port);
    expect([answer.status, answer.body, answer.headers['x-saw'], answer.headers['keep-alive']]).toEqual([200, 'hello', 'yes keep-alive', undefined]);
  });

  it('answers 502 when the upstream resets the connection, 504 when it is too slow, 502 on an invalid response', async () => {
    const upstream = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', (data) => {
        const path = data.toString('latin1').split(' ')[1];
        if (path === '/reset') socket.resetAndDestroy();
        else if (path === '/invalid') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n');
      });
    });
    const port = await gateway(target(await listening(upstream), 200));
    expect((await get(port, '/reset')).status).toBe(502);
    expect((await get(port, '/slow')).status).toBe(504);
    expect((await get(port, '/invalid')).status).toBe(502);
  });

  it('answers 502 when nothing listens upstream', async () => {
    const closed = createServer();
    const deadPort = await listening(closed);
    await new Promise((resolve) => closed.close(resolve));
    const port = await gateway(target(deadPort));
    expect((await get(port)).status).toBe(502);
  });

  it('stops the upstream exchange when the client leaves', async () => {
    let upstreamClosed: () => void;
    const closedUpstream = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const upstream = createServer((socket) => {
      socket.on('error', () => undefined);
      // it reads the request and never answers
      socket.resume();
      socket.on('close', () => upstreamClosed());
    });
    const port = await gateway(target(await listening(upstream)));
    const client = httpRequest({ host: '127.0.0.1', port, path: '/waits', agent: false });
    client.on('error', () => undefined);
    client.end();
    upstream.once('connection', () => setImmediate(() => client.destroy()));
    await closedUpstream;
  });

  it('relays a large body intact to a client that stops reading for a while, then reuses the connection', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 'abcdefgh');
    let connections = 0;
    const upstream = createHttpServer((req, res) => res.end(req.url === '/big' ? big : 'small'));
    upstream.on('connection', () => connections++);
    const port = await gateway(target(await listening(upstream)));
    const received = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/big', agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.once('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // the gateway's buffers fill while the client does not read: the upstream connection is paused
          res.pause();
          setTimeout(() => {
            res.on('data', (more: Buffer) => chunks.push(more));
            res.resume();
          }, 200);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
      });
      req.on('error', reject);
      req.end();
    });
    expect(received.equals(big)).toBe(true);
    expect((await get(port, '/small')).body).toBe('small');
    expect(connections).toBe(1);
  });

  it('hands a streamed request body to the general client', async () => {
    const upstream = createHttpServer((req, res) => {
      let received = '';
      req.on('data', (chunk: Buffer) => (received += chunk.toString()));
      req.on('end', () => res.end(`${req.headers['transfer-encoding']}:${received}`));
    });
    const port = await gateway(target(await listening(upstream)), (req) => req);
    expect((await get(port, '/', 'POST', 'streamed')).body).toMatch(/:streamed$/);
  });
});
