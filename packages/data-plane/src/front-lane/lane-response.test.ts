import { describe, expect, it } from '@jest/globals';
import type { Socket } from 'node:net';
import { LaneRequest } from './lane-request';
import { LaneResponse, type LaneOutput } from './lane-response';

/** what a response wrote, as one string, and how it ended */
function recorder(keepAlive = true): LaneOutput & { text: () => string; ended: boolean | null } {
  const parts: string[] = [];
  const out = {
    keepAliveSeconds: 60,
    ended: null as boolean | null,
    bytesWritten: 0,
    mayKeepAlive: () => keepAlive,
    send(bytes: Buffer | string, last: boolean, kept: boolean, done?: () => void) {
      parts.push(bytes.toString());
      if (last) {
        out.ended = kept;
        done?.();
      }
      return true;
    },
    destroy: () => undefined,
    text: () => parts.join('').replace(/Date: [^\r]+\r\n/, ''),
  };
  return out;
}

const request = (method = 'GET', minor = 1, raw: string[] = ['Host', 'a']) => new LaneRequest({} as Socket, method, '/', raw, 1, minor);

describe('lane response', () => {
  it('gives a body sent whole with end() its Content-Length, the set headers first', () => {
    const out = recorder();
    const res = new LaneResponse(request(), out);
    res.setHeader('X-Kong-Request-Id', 'abc');
    res.statusCode = 404;
    res.end('{"message":"x"}');
    expect(out.text()).toBe('HTTP/1.1 404 Not Found\r\nX-Kong-Request-Id: abc\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\nContent-Length: 15\r\n\r\n{"message":"x"}');
    expect(out.ended).toBe(true);
    expect(res.writableFinished).toBe(true);
  });

  it('streams chunked after writeHead without a length, in one write with the head when the body comes at once', () => {
    const out = recorder();
    const res = new LaneResponse(request(), out);
    res.writeHead(200, ['content-type', 'text/plain']);
    res.write(Buffer.from('hello'));
    res.end();
    expect(out.text()).toBe('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  });

  it('lets writeHead headers replace those set before of the same name, and keeps repeated ones', () => {
    const out = recorder();
    const res = new LaneResponse(request(), out);
    res.setHeader('Via', 'old');
    res.setHeader('x-plugin', '1');
    res.writeHead(200, { via: '1.1 gw', 'set-cookie': ['a=1', 'b=2'], 'content-length': '0' });
    res.end();
    expect(out.text()).toBe('HTTP/1.1 200 OK\r\nx-plugin: 1\r\nvia: 1.1 gw\r\nset-cookie: a=1\r\nset-cookie: b=2\r\ncontent-length: 0\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n');
  });

  it('sends no body to HEAD, nor for 204, and closes an HTTP/1.0 body without a length', () => {
    const head = recorder();
    new LaneResponse(request('HEAD'), head).writeHead(200, ['content-length', '5']).end(Buffer.from('hello'));
    expect(head.text()).toBe('HTTP/1.1 200 OK\r\ncontent-length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n');
    const empty = recorder();
    new LaneResponse(request(), empty).writeHead(204, []).end();
    expect(empty.text()).toBe('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n');
    const old = recorder();
    const res = new LaneResponse(request('GET', 0), old);
    res.writeHead(200, []);
    res.write('a');
    res.end();
    expect(old.text()).toBe('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\na');
    expect(old.ended).toBe(false);
  });

  it('refuses header values with line breaks and invalid names, as node:http does', () => {
    const res = new LaneResponse(request(), recorder());
    expect(() => res.setHeader('x-a', 'one\r\nx-injected: yes')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CHAR' }));
    expect(() => res.writeHead(200, ['bad name', 'v'])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_HTTP_TOKEN' }));
  });

  it('closes after the response when the response says Connection: close', () => {
    const out = recorder();
    new LaneResponse(request(), out).writeHead(200, ['connection', 'close', 'content-length', '0']).end();
    expect(out.text()).toBe('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    expect(out.ended).toBe(false);
  });

  it('writes the head byte for byte: latin1 values, long values, a custom reason and the date line', () => {
    const parts: Buffer[] = [];
    const out = { ...recorder(), send: (bytes: Buffer | string) => parts.push(Buffer.from(bytes as Buffer)) > 0 };
    const long = 'v'.repeat(200);
    const res = new LaneResponse(request(), out);
    res.statusCode = 299;
    res.statusMessage = 'Fine';
    res.setHeader('x-name', 'Andr\u00e9');
    res.setHeader('x-long', long);
    res.end(Buffer.from([0xff, 0x00]));
    const bytes = Buffer.concat(parts);
    const text = bytes.toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 299 Fine\r\nx-name: Andr\u00e9\r\nx-long: v{200}\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\nContent-Length: 2\r\n\r\n/);
    // one byte a character in the head (é is 0xe9), the body's bytes as given
    expect(bytes.indexOf(Buffer.from([0x41, 0x6e, 0x64, 0x72, 0xe9]))).toBeGreaterThan(0);
    expect(bytes.subarray(-2)).toEqual(Buffer.from([0xff, 0x00]));
    expect(bytes.length).toBe(Buffer.byteLength(text, 'latin1'));
  });

  it('sends a head alone when the body is to follow (flushHeaders), then the chunks framed', () => {
    const out = recorder();
    const res = new LaneResponse(request(), out);
    res.writeHead(200, ['x-a', '1']);
    res.flushHeaders();
    expect(out.text()).toBe('HTTP/1.1 200 OK\r\nx-a: 1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\nTransfer-Encoding: chunked\r\n\r\n');
    res.write(Buffer.alloc(20, 'z'));
    res.end(Buffer.from('!'));
    expect(out.text()).toBe(`HTTP/1.1 200 OK\r\nx-a: 1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n${'z'.repeat(20)}\r\n1\r\n!\r\n0\r\n\r\n`);
  });
});
