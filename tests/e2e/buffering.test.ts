// Kong's request_buffering and response_buffering on routes, in both topologies, against a real upstream started
// here: buffered (the default) the upstream gets a chunked upload whole with a Content-Length, and the client gets
// nothing of a response before the upstream has sent all of it; unbuffered, the upload reaches the upstream as the
// client sends it (chunked) and the response reaches the client as the upstream sends it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { cleanUp } from './support/helpers';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

/** A promise with its resolver, for one step of an exchange the test and the upstream take in turn. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** The upstream: `/record` answers what it received; `/stream-in` tells when the first body bytes arrive; `/stream-out` answers in two parts. */
class StagedUpstream {
  server!: Server;
  port = 0;
  firstBytesIn = signal<string>();
  partOneWritten = signal();
  release = signal();
  received: Received[] = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  reset(): void {
    this.firstBytesIn = signal<string>();
    this.partOneWritten = signal();
    this.release = signal();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.url === '/stream-out') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part one;', () => this.partOneWritten.resolve());
      void this.release.promise.then(() => res.end('part two'));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      if (chunks.length === 0) this.firstBytesIn.resolve(c.toString());
      chunks.push(c);
    });
    req.on('end', () => {
      const got = { headers: req.headers, body: Buffer.concat(chunks).toString() };
      this.received.push(got);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(got));
    });
  }

  close(): Promise<void> {
    this.release.resolve();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe.each(TOPOLOGIES)('request and response buffering (%s)', (name) => {
  let topology: Topology;
  const upstream = new StagedUpstream();

  beforeAll(async () => {
    await upstream.start();
    topology = await startTopology(name);
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/services', { name: 'staged', url: `http://127.0.0.1:${upstream.port}` });
    await admin('/services/staged/routes', { name: 'buffered', hosts: ['buffered.test'], strip_path: false });
    await admin('/services/staged/routes', { name: 'streamed', hosts: ['streamed.test'], strip_path: false, request_buffering: false, response_buffering: false });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(() => topology?.stop(), () => upstream.close());
  });

  /** a chunked upload: `one;`, then `two` once `next` resolves */
  async function* upload(next: Promise<unknown>): AsyncGenerator<Buffer> {
    yield Buffer.from('one;');
    await next;
    yield Buffer.from('two');
  }

  it('buffered: the upstream gets a chunked upload whole, with a Content-Length, on every data plane', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await request(`${dp.proxyUrl}/record`, { method: 'POST', headers: { host: 'buffered.test' }, body: Readable.from(upload(Promise.resolve())) });
      const got = (await res.body.json()) as Received;
      expect(res.statusCode).toBe(200);
      expect(got.body).toBe('one;two');
      expect(got.headers['content-length']).toBe('7');
      expect(got.headers['transfer-encoding']).toBeUndefined();
    }
  });

  it('unbuffered: the upload reaches the upstream as it is sent, chunked', async () => {
    upstream.reset();
    // the second part is only sent once the upstream has the first: a buffering gateway would never answer
    const res = await request(`${topology.proxyUrl}/stream-in`, { method: 'POST', headers: { host: 'streamed.test' }, body: Readable.from(upload(upstream.firstBytesIn.promise)) });
    const got = (await res.body.json()) as Received;
    expect(await upstream.firstBytesIn.promise).toBe('one;');
    expect(got.body).toBe('one;two');
    expect(got.headers['transfer-encoding']).toBe('chunked');
    expect(got.headers['content-length']).toBeUndefined();
  });

  it('unbuffered: the response reaches the client as the upstream sends it', async () => {
    upstream.reset();
    const res = await request(`${topology.proxyUrl}/stream-out`, { headers: { host: 'streamed.test' } });
    const parts: string[] = [];
    for await (const chunk of res.body) {
      parts.push(String(chunk));
      // the upstream finishes only once the client has its first part
      if (parts.length === 1) upstream.release.resolve();
    }
    expect(parts[0]).toBe('part one;');
    expect(parts.join('')).toBe('part one;part two');
  });

  it('buffered: the client gets nothing of the response before the upstream has sent all of it', async () => {
    upstream.reset();
    const events: string[] = [];
    const pending = request(`${topology.proxyUrl}/stream-out`, { headers: { host: 'buffered.test' } }).then(async (res) => {
      events.push('client: response head');
      return { status: res.statusCode, body: await res.body.text() };
    });
    await upstream.partOneWritten.promise;
    // a whole exchange through the same gateway in the meantime: a streaming gateway would have passed part one on
    await request(`${topology.proxyUrl}/record`, { method: 'POST', headers: { host: 'buffered.test' }, body: 'probe' }).then((r) => r.body.text());
    events.push('upstream: finished');
    upstream.release.resolve();
    expect(await pending).toEqual({ status: 200, body: 'part one;part two' });
    expect(events).toEqual(['upstream: finished', 'client: response head']);
  });
});
