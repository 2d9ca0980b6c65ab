import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { inReadBuffer, kept, readIntoSharedBuffer, readThroughStream } from './shared-reads';

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** a server whose accepted sockets go to `accepted`, and a client connected to it */
async function pair(accepted: (socket: Socket) => void): Promise<Socket> {
  const server: Server = createServer(accepted);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  closers.push(() => {
    client.destroy();
    server.close();
  });
  return client;
}

const next = <T>(): { promise: Promise<T>; resolve: (value: T) => void } => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe('reads into the shared buffer', () => {
  it('hands the reads of an accepted socket to the callback, in the shared buffer, and keeps a copy on demand', async () => {
    const read = next<{ taken: boolean; text: string; shared: boolean; copy: Buffer; copyShared: boolean }>();
    const client = await pair((socket) => {
      const taken = readIntoSharedBuffer(socket, (bytes) => {
        const copy = kept(bytes);
        read.resolve({ taken, text: bytes.toString(), shared: inReadBuffer(bytes), copy, copyShared: inReadBuffer(copy) });
      });
    });
    client.write('hello');
    const got = await read.promise;
    expect([got.taken, got.text, got.shared, got.copy.toString(), got.copyShared]).toEqual([true, 'hello', true, 'hello', false]);
  });

  it('gives a socket back to its stream: later reads are data events of their own memory', async () => {
    const chunks: Buffer[] = [];
    const first = next<void>();
    const later = next<void>();
    const client = await pair((socket) => {
      readIntoSharedBuffer(socket, () => {
        readThroughStream(socket);
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          later.resolve();
        });
        first.resolve();
      });
    });
    client.write('one');
    await first.promise;
    client.write('two');
    await later.promise;
    expect(chunks.map((c) => [c.toString(), inReadBuffer(c)])).toEqual([['two', false]]);
  });

  it('leaves a socket that already has a reader to its stream', async () => {
    const outcome = next<{ taken: boolean; text: string }>();
    const client = await pair((socket) => {
      socket.on('data', (chunk: Buffer) => outcome.resolve({ taken, text: chunk.toString() }));
      const taken = readIntoSharedBuffer(socket, () => outcome.resolve({ taken, text: 'callback' }));
    });
    client.write('data event');
    expect(await outcome.promise).toEqual({ taken: false, text: 'data event' });
  });
});
