import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TracingHttpSender } from './http-sender';
import { ResponseReader } from './response-reader';

const TIMEOUTS = { connect_timeout: 1000, send_timeout: 1000, read_timeout: 1000 };

describe('ResponseReader', () => {
  it('reads a content-length body split across chunks', () => {
    const reader = new ResponseReader();
    expect(reader.feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab'))).toBeNull();
    expect(reader.feed(Buffer.from('cde'))).toEqual({ status: 200, body: Buffer.from('abcde'), keepAlive: true });
  });

  it('reads a chunked body with trailers, after a 100 Continue', () => {
    const reader = new ResponseReader();
    const bytes = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nx-t: 1\r\n\r\n';
    let response = null;
    for (const byte of Buffer.from(bytes)) response ??= reader.feed(Buffer.from([byte]));
    expect(response).toEqual({ status: 400, body: Buffer.from('abcde'), keepAlive: false });
  });

  it('reads a body framed by the close, and refuses what is not HTTP', () => {
    const reader = new ResponseReader();
    expect(reader.feed(Buffer.from('HTTP/1.0 200 OK\r\n\r\nhello'))).toBeNull();
    expect(reader.end()).toEqual({ status: 200, body: Buffer.from('hello'), keepAlive: false });
    expect(() => new ResponseReader().feed(Buffer.from('SSH-2.0\r\n\r\n'))).toThrow('invalid response');
  });
});

describe('TracingHttpSender', () => {
  let server: Server;
  const bodies: string[] = [];
  const connections: number[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      connections.push(req.socket.remotePort!);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(`${req.headers['x-key']} ${Buffer.concat(chunks).toString()}`);
        // chunked answers: no content-length
        res.writeHead(req.url === '/fail' ? 500 : 200);
        res.end(req.url === '/fail' ? 'nope' : 'ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    bodies.length = 0;
    connections.length = 0;
  });

  const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;

  it('posts over one kept-alive connection, and again on a new one once the receiver closed it', async () => {
    const sender = new TracingHttpSender(url('/v1'), TIMEOUTS, { 'x-key': 'k' }, (s) => s === 200);
    await sender.send('one');
    await sender.send(Buffer.from('two'));
    server.closeIdleConnections();
    await sender.send('three');
    await sender.close();
    expect(bodies).toEqual(['k one', 'k two', 'k three']);
    expect(connections[0]).toBe(connections[1]);
    expect(connections[2]).not.toBe(connections[1]);
  });

  it('fails with the status and body of a refused batch, and when nothing listens', async () => {
    const sender = new TracingHttpSender(url('/fail'), TIMEOUTS, {}, (s) => s === 200);
    await expect(sender.send('x')).rejects.toThrow('response error: 500, body: nope');
    await sender.close();
    const nowhere = new TracingHttpSender('http://127.0.0.1:1/v1', TIMEOUTS, {}, () => true);
    await expect(nowhere.send('x')).rejects.toThrow('ECONNREFUSED');
  });
});

describe('TracingHttpSender timeouts', () => {
  it('gives up on a receiver that stops answering on a kept-alive connection, without sending again', async () => {
    let requests = 0;
    // answers the first request only
    const silent = createServer((req, res) => {
      if (requests++ === 0) req.on('end', () => res.end('ok')).resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sender = new TracingHttpSender(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, { connect_timeout: 1000, send_timeout: 0, read_timeout: 200 }, {}, () => true);
    await sender.send('answered');
    await expect(sender.send('ignored')).rejects.toThrow('timeout waiting for the receiver');
    expect(requests).toBe(2);
    await sender.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
