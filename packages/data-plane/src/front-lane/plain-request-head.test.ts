import { describe, expect, it } from '@jest/globals';
import { seededRandom } from '@gatehouse/testkit';
import { HTTPParser, methods } from './llhttp';
import { plainRequestHead } from './plain-request-head';
import type { Head } from './simple-head';

/** The head llhttp reads from the same bytes, driven as the lane drives it; 'refused' when it refuses them. */
function throughLlhttp(head: Buffer): Head | 'refused' | 'incomplete' {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, 16 * 1024, HTTPParser.kLenientNone);
  let found: Head | null = null;
  parser[HTTPParser.kOnHeadersComplete] = (major: number, minor: number, raw: string[], method: number, url: string, _s: unknown, _m: unknown, upgrade: boolean, keepAlive: boolean) => {
    found = { major, minor, raw, method: methods[method] ?? '', url, upgrade, keepAlive, complete: false };
    return 0;
  };
  parser[HTTPParser.kOnBody] = () => undefined;
  parser[HTTPParser.kOnMessageComplete] = () => {
    if (found !== null) found.complete = true;
  };
  const parsed = parser.execute(head);
  parser.close();
  if (typeof parsed !== 'number') return 'refused';
  return found ?? 'incomplete';
}

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

describe('plainRequestHead', () => {
  it('reads a plain GET as llhttp does', () => {
    const head = bytes('GET /api/hello?a=1&b=%20 HTTP/1.1\r\nHost: example.test\r\napikey: k:s\r\nX-Empty:\r\nAccept:\t*/*\r\n\r\n');
    expect(plainRequestHead(head, head.length)).toEqual({
      major: 1,
      minor: 1,
      raw: ['Host', 'example.test', 'apikey', 'k:s', 'X-Empty', '', 'Accept', '*/*'],
      method: 'GET',
      url: '/api/hello?a=1&b=%20',
      upgrade: false,
      keepAlive: true,
      complete: true,
    });
    expect(throughLlhttp(head)).toEqual(plainRequestHead(head, head.length));
  });

  it('reads `Connection: close` and `Content-Length: 0`', () => {
    const head = bytes('DELETE /a HTTP/1.1\r\nHost: h\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    expect(plainRequestHead(head, head.length)).toMatchObject({ method: 'DELETE', keepAlive: false, complete: true });
  });

  it.each([
    ['HTTP/1.0', 'GET / HTTP/1.0\r\nHost: h\r\n\r\n'],
    ['a body', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n'],
    ['a chunked body', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['an upgrade', 'GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'],
    ['CONNECT', 'CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n'],
    ['an extension method', 'PURGE / HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['a lower-case method', 'get / HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['the absolute form', 'GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['the asterisk form', 'OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['a fragment', 'GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['a raw byte past ASCII in the target', 'GET /\u00e9 HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['a tab in the target', 'GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['two spaces', 'GET  / HTTP/1.1\r\nHost: h\r\n\r\n'],
    ['a folded line', 'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n'],
    ['white space before the colon', 'GET / HTTP/1.1\r\nHost : h\r\n\r\n'],
    ['a bare LF', 'GET / HTTP/1.1\nHost: h\r\n\r\n'],
    ['a NUL in a value', 'GET / HTTP/1.1\r\nHost: h\u0000\r\n\r\n'],
    ['two lengths', 'GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n'],
  ])('leaves %s to llhttp', (_case, text) => {
    const head = bytes(text);
    expect(plainRequestHead(head, head.length)).toBeNull();
  });

  it('reads the head alone: a pipelined request after it is not part of it', () => {
    const first = 'GET /one HTTP/1.1\r\nHost: h\r\n\r\n';
    const both = bytes(`${first}GET /two HTTP/1.1\r\nHost: h\r\n\r\n`);
    expect(plainRequestHead(both, first.length)).toMatchObject({ url: '/one', raw: ['Host', 'h'] });
  });

  it('takes only heads llhttp takes, and reads each as llhttp does (40,000 seeded heads, mutated)', () => {
    const random = seededRandom(97531);
    const pick = (n: number): number => Math.floor(random() * n);
    const verbs = ['GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PURGE', 'get', 'CONNECT', 'TRACE'];
    const targets = ['/', '/api/hello', '/a?b=c', '/%2e%2E/x', '/a;b', '/"<>\\^`{|}', "/!$&'()*+,-.:=@[]_~", '//a', '/a#f', '*', 'http://h/', ''];
    const names = ['Host', 'host', 'Content-Length', 'Connection', 'Transfer-Encoding', 'Upgrade', 'Expect', 'X-A', 'apikey', 'Cookie', 'x_b', 'A(b'];
    const values = ['h', 'example.test:8000', '0', '2', 'keep-alive', 'close', 'upgrade', 'chunked', 'a b', '', ' x', 'x ', '\tx', 'a\rb', 'é', '\u0001', '100-continue'];
    const edits = ['\r', '\n', ' ', '\t', ':', '\u0000', '\u007f', 'ÿ', '\r\n', '#', '?'];
    let taken = 0;
    for (let round = 0; round < 40_000; round++) {
      let text = `${verbs[pick(verbs.length)]} ${targets[pick(targets.length)]}${pick(3) === 0 ? targets[pick(targets.length)] : ''} HTTP/1.${pick(6) === 0 ? '0' : '1'}\r\n`;
      const lines = pick(4);
      for (let i = 0; i < lines; i++) text += `${names[pick(names.length)]}${[': ', ': ', ':', ':\t', ' :'][pick(5)]}${values[pick(values.length)]}\r\n`;
      text += '\r\n';
      if (pick(3) === 0) {
        const at = pick(text.length);
        text = text.slice(0, at) + edits[pick(edits.length)] + text.slice(at + pick(2));
      }
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) continue;
      const head = bytes(text.slice(0, end + 4));
      const plain = plainRequestHead(head, head.length);
      if (plain === null) continue;
      taken++;
      expect(throughLlhttp(head)).toEqual(plain);
    }
    // the generator makes enough heads the narrow path takes for the comparison to mean something
    expect(taken).toBeGreaterThan(3000);
  });
});
