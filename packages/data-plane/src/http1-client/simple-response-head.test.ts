import { describe, expect, it } from '@jest/globals';
import { seededRandom } from '@gatehouse/testkit';
import { HTTPParser, type OnHeadersComplete } from '@gatehouse/core';
import { framedBodyLength, STOP_AFTER_HEAD } from './response-framing';
import { MAX_HEAD, simpleResponseHead } from './simple-response-head';

const NGINX =
  'HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sat, 28 Nov 2026 16:00:00 GMT\r\nContent-Type: text/plain\r\n' +
  'Content-Length: 12\r\nConnection: keep-alive\r\n\r\nhello world\n';

/** `text` as a read into a larger buffer (what lies past the read is left as given) */
function read(text: string, after = ''): [Buffer, number] {
  const buffer = Buffer.alloc(8192);
  const length = buffer.write(text, 0, 'latin1');
  buffer.write(after, length, 'latin1');
  return [buffer, length];
}

interface LlhttpHead {
  status: number;
  headers: string[];
  keepAlive: boolean;
  bodyStart: number;
  bodyLength: number;
}

/** What the upstream client reads from the same bytes through llhttp (strict), as it drives it; null when refused. */
function throughLlhttp(buffer: Buffer, length: number): LlhttpHead | 'refused' | 'other' {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
  let head: Omit<LlhttpHead, 'bodyStart'> | null = null;
  let parts: string[] = [];
  parser[HTTPParser.kOnHeaders] = (headers: string[]) => void parts.push(...headers);
  parser[HTTPParser.kOnHeadersComplete] = ((_major, _minor, headers, _method, _url, status, _text, _upgrade, keepAlive) => {
    const all = headers ?? parts;
    parts = [];
    if (status < 200) return 0;
    head = { status, headers: all, keepAlive, bodyLength: framedBodyLength(status, all) };
    return head.bodyLength > 0 ? STOP_AFTER_HEAD : 0;
  }) satisfies OnHeadersComplete;
  const parsed = parser.execute(buffer.subarray(0, length));
  parser.close();
  if (typeof parsed !== 'number') return 'refused';
  if (head === null) return 'other';
  const found = head as Omit<LlhttpHead, 'bodyStart'>;
  return { ...found, bodyStart: found.bodyLength > 0 ? parsed : -1 };
}

describe('simpleResponseHead', () => {
  it('reads a plain head as llhttp does: status, headers as sent, keep-alive, where the body starts and its length', () => {
    const [buffer, length] = read(NGINX);
    expect(simpleResponseHead(buffer, length)).toEqual({
      status: 200,
      headers: ['Server', 'nginx/1.22.1', 'Date', 'Sat, 28 Nov 2026 16:00:00 GMT', 'Content-Type', 'text/plain', 'Content-Length', '12', 'Connection', 'keep-alive'],
      keepAlive: true,
      bodyStart: NGINX.indexOf('hello'),
      bodyLength: 12,
    });
    expect(throughLlhttp(buffer, length)).toEqual(simpleResponseHead(buffer, length));
  });

  it('reads `Connection: close`, an empty reason, an empty value, leading white space and a zero length', () => {
    const head = 'HTTP/1.1 404 \r\nX-Empty:\r\nX-Tab:\t\tv  w\r\nconnection: Close\r\ncontent-length: 0\r\n\r\n';
    const [buffer, length] = read(head);
    expect(simpleResponseHead(buffer, length)).toEqual({
      status: 404,
      headers: ['X-Empty', '', 'X-Tab', 'v  w', 'connection', 'Close', 'content-length', '0'],
      keepAlive: false,
      bodyStart: head.length,
      bodyLength: 0,
    });
  });

  it.each([
    ['a head cut short', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'],
    ['HTTP/1.0', 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['HTTP/2 in a text head', 'HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['an interim response', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['switching protocols', 'HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n'],
    ['204', 'HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n'],
    ['304', 'HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n'],
    ['a status past 599', 'HTTP/1.1 600 X\r\nContent-Length: 2\r\n\r\nok'],
    ['a status of two digits', 'HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['no reason and no space', 'HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok'],
    ['a chunked body', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'],
    ['a body to the end of the connection', 'HTTP/1.1 200 OK\r\nServer: x\r\n\r\nok'],
    ['two lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok'],
    ['a length that is not digits', 'HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok'],
    ['an empty length', 'HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nok'],
    ['a length of 16 digits', 'HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\nok'],
    ['Upgrade on a 200', 'HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nok'],
    ['a Connection list', 'HTTP/1.1 200 OK\r\nConnection: keep-alive, x-a\r\nContent-Length: 2\r\n\r\nok'],
    ['a folded line', 'HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok'],
    ['white space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok'],
    ['white space after a value', 'HTTP/1.1 200 OK\r\nX-A: a \r\nContent-Length: 2\r\n\r\nok'],
    ['a bare LF', 'HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nok'],
    ['a bare CR in a value', 'HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok'],
    ['a NUL in a value', 'HTTP/1.1 200 OK\r\nX-A: a\u0000b\r\nContent-Length: 2\r\n\r\nok'],
    ['DEL in a value', 'HTTP/1.1 200 OK\r\nX-A: a\u007fb\r\nContent-Length: 2\r\n\r\nok'],
    ['a control character in the reason', 'HTTP/1.1 200 O\u0001K\r\nContent-Length: 2\r\n\r\nok'],
    ['a name that is not a token', 'HTTP/1.1 200 OK\r\nX(A): a\r\nContent-Length: 2\r\n\r\nok'],
    ['an empty name', 'HTTP/1.1 200 OK\r\n: a\r\nContent-Length: 2\r\n\r\nok'],
    ['a line without a colon', 'HTTP/1.1 200 OK\r\nX-A\r\nContent-Length: 2\r\n\r\nok'],
  ])('leaves %s to llhttp', (_case, head) => {
    const [buffer, length] = read(head);
    expect(simpleResponseHead(buffer, length)).toBeNull();
  });

  it('reads nothing past the read: a head whose end lies in stale bytes of the buffer goes to llhttp', () => {
    const whole = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
    for (let cut = 1; cut < whole.indexOf('ok'); cut++) {
      const [buffer] = read(whole);
      expect(simpleResponseHead(buffer, cut)).toBeNull();
    }
  });

  it('leaves a head longer than MAX_HEAD bytes to llhttp', () => {
    const long = `HTTP/1.1 200 OK\r\nX-Long: ${'a'.repeat(MAX_HEAD)}\r\nContent-Length: 2\r\n\r\nok`;
    const [buffer, length] = read(long);
    expect(simpleResponseHead(buffer, length)).toBeNull();
    expect(throughLlhttp(buffer, length)).toMatchObject({ status: 200, bodyLength: 2 });
  });

  it('takes only heads llhttp takes, and reads each as llhttp does (40,000 seeded heads, mutated)', () => {
    const random = seededRandom(424242);
    const pick = (n: number): number => Math.floor(random() * n);
    const names = ['Content-Length', 'content-length', 'Connection', 'connection', 'Transfer-Encoding', 'Upgrade', 'Keep-Alive', 'X-A', 'Server', 'Set-Cookie', 'Date', 'x_b', 'A(b', 'Via', 'Content-Type', 'ETag'];
    const values = ['12', '0', '2', '007', 'keep-alive', 'close', 'Close', 'chunked', 'upgrade', 'timeout=5', 'a b', '', ' x', 'x ', '\tx', 'a\rb', 'a\nb', 'é', '\u0001', '+3', '1,1'];
    const statuses = ['200', '200', '201', '204', '304', '404', '500', '599', '600', '101', '100', '20x'];
    const edits = ['\r', '\n', ' ', '\t', ':', '\u0000', '\u007f', 'ÿ', '\r\n', ' \r\n'];
    let taken = 0;
    for (let round = 0; round < 40_000; round++) {
      let head = `HTTP/1.${pick(5) === 0 ? '0' : '1'} ${statuses[pick(statuses.length)]} ${['OK', '', 'Not Found', 'a\tb'][pick(4)]}\r\n`;
      const lines = pick(4);
      // one line is a Content-Length, mostly a plain one: the narrow path takes no head without one
      const framing = pick(lines + 1);
      for (let i = 0; i <= lines; i++) {
        if (i === framing) head += `Content-Length: ${pick(4) === 0 ? values[pick(values.length)] : String(pick(20))}\r\n`;
        else if (i < lines) head += `${names[pick(names.length)]}${[': ', ': ', ':', ':\t', ' :'][pick(5)]}${values[pick(values.length)]}\r\n`;
      }
      head += '\r\n';
      if (pick(3) === 0) {
        const at = pick(head.length);
        head = head.slice(0, at) + edits[pick(edits.length)] + head.slice(at + pick(2));
      }
      const [buffer, length] = read(`${head}0123456789abcdef`);
      const simple = simpleResponseHead(buffer, length);
      if (simple === null) continue;
      taken++;
      // the message alone (what follows it is another matter: the connection is not used again either way)
      const llhttp = throughLlhttp(buffer, simple.bodyStart + simple.bodyLength);
      // a zero length: the head is the whole message, and llhttp does not stop after it
      expect(llhttp).toEqual(simple.bodyLength > 0 ? simple : { ...simple, bodyStart: -1 });
    }
    // the generator makes enough heads the narrow path takes for the comparison to mean something
    expect(taken).toBeGreaterThan(3000);
  });
});
