import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { LaneConnection, type LaneHost } from './front-lane/lane-connection';
import { deferToIoEnd } from './io-end-writes';

const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

/** a socket that records what is written to it, and can be closed by "the client" */
class FakeSocket extends EventEmitter {
  writable = true;
  destroyed = false;
  bytesWritten = 0;
  readonly written: string[] = [];

  setNoDelay(): this {
    return this;
  }

  isPaused(): boolean {
    return false;
  }

  write(bytes: Buffer | string, done?: () => void): boolean {
    this.written.push(bytes.toString());
    this.bytesWritten += bytes.length;
    if (done) process.nextTick(done);
    return true;
  }

  destroy(): this {
    this.writable = false;
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}

/** a lane host that answers every request at once with its URL as the body */
const answeringHost: LaneHost = {
  serve: (req, res) => void res.end(`answer to ${req.url}`),
  handOver: () => undefined,
  forget: () => undefined,
  keepAliveSeconds: 60,
  closing: false,
  maxHeaderSize: 16 * 1024,
};

describe('writes deferred to the end of the I/O phase', () => {
  it('flushes every writer deferred in a turn once, in order, after the turn', async () => {
    const flushed: string[] = [];
    const writer = (name: string) => ({ flushDeferred: () => void flushed.push(name) });
    deferToIoEnd(writer('a'));
    deferToIoEnd(writer('b'));
    expect(flushed).toEqual([]);
    await turnEnd();
    expect(flushed).toEqual(['a', 'b']);
  });

  it('leaves a writer deferred while the flush runs for the next turn', async () => {
    const flushed: string[] = [];
    const late = { flushDeferred: () => void flushed.push('late') };
    deferToIoEnd({
      flushDeferred: () => {
        flushed.push('first');
        deferToIoEnd(late);
      },
    });
    await turnEnd();
    expect(flushed).toEqual(['first']);
    await turnEnd();
    expect(flushed).toEqual(['first', 'late']);
  });

  it('holds the responses of a burst of lane connections until every one was served, then writes them', async () => {
    const sockets = [new FakeSocket(), new FakeSocket()];
    sockets.map((s) => new LaneConnection(s as unknown as Socket, answeringHost));
    sockets[0]!.emit('data', Buffer.from('GET /one HTTP/1.1\r\nHost: a\r\n\r\n'));
    sockets[1]!.emit('data', Buffer.from('GET /two HTTP/1.1\r\nHost: a\r\n\r\n'));
    expect(sockets.map((s) => s.written.length)).toEqual([0, 0]);
    await turnEnd();
    expect(sockets[0]!.written).toHaveLength(1);
    expect(sockets[0]!.written[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nanswer to \/one$/);
    expect(sockets[1]!.written[0]).toMatch(/answer to \/two$/);
  });

  it('writes a response before serving the request pipelined after it, and counts held bytes as written', async () => {
    const socket = new FakeSocket();
    const sizes: number[] = [];
    const host: LaneHost = {
      ...answeringHost,
      serve: (req, res) => {
        sizes.push(connection.bytesWritten);
        res.end(`answer to ${req.url}`);
        sizes.push(connection.bytesWritten);
      },
    };
    const connection = new LaneConnection(socket as unknown as Socket, host);
    socket.emit('data', Buffer.from('GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\n'));
    // the first answer went out when the second request was taken; the second waits for the turn's end
    expect(socket.written).toHaveLength(1);
    expect(socket.written[0]).toMatch(/answer to \/one$/);
    expect(sizes[1]).toBe(socket.written[0]!.length);
    expect(sizes[2]).toBe(sizes[1]);
    expect(sizes[3]).toBeGreaterThan(sizes[2]!);
    await turnEnd();
    expect(socket.written).toHaveLength(2);
    expect(socket.written[1]).toMatch(/answer to \/two$/);
    expect(socket.bytesWritten).toBe(sizes[3]);
  });

  it('ends a held response cut short when its client left before the turn ended', async () => {
    const socket = new FakeSocket();
    const events: string[] = [];
    const host: LaneHost = {
      ...answeringHost,
      serve: (_req, res) => {
        res.on('finish', () => events.push('finish'));
        res.on('close', () => events.push(`close, destroyed ${res.destroyed}`));
        res.end('late');
      },
    };
    new LaneConnection(socket as unknown as Socket, host);
    socket.emit('data', Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n'));
    socket.destroy();
    await turnEnd();
    expect(socket.written).toEqual([]);
    expect(events).toEqual(['close, destroyed true']);
  });
});
