import { describe, expect, it } from '@jest/globals';
import { COALESCE_LIMIT, requestHead } from './request-head';

const head = (method: string, path: string, headers: Record<string, string | string[]>, body: Buffer | null = null) =>
  requestHead(method, path, headers, body, 'upstream.test:8080', 1000);
/** the request's head as text (its bytes up to the blank line) */
const headText = (request: ReturnType<typeof head>): string | undefined => {
  const text = request?.bytes.toString('latin1');
  return text?.slice(0, text.indexOf('\r\n\r\n') + 4);
};

describe('the request head of the HTTP/1.1 client', () => {
  it('puts host first, keeps the connection alive, sends the headers as given and the body length last', () => {
    const request = head('POST', '/a?b=1', { 'X-Custom': 'one', accept: ['a', 'b'], host: 'example.test' }, Buffer.from('hello'));
    expect(request?.bytes.toString('latin1')).toBe('POST /a?b=1 HTTP/1.1\r\nhost: example.test\r\nconnection: keep-alive\r\nX-Custom: one\r\naccept: a\r\naccept: b\r\ncontent-length: 5\r\n\r\nhello');
    expect(request?.body).toBeNull();
    expect(request).toMatchObject({ idempotent: false, reusable: true, readTimeout: 1000 });
  });

  it("names the target's host when the request has none, and announces an empty body only where one is expected", () => {
    expect(headText(head('GET', '/', {}))).toBe('GET / HTTP/1.1\r\nhost: upstream.test:8080\r\nconnection: keep-alive\r\n\r\n');
    expect(headText(head('PUT', '/', {}, Buffer.alloc(0)))).toBe('PUT / HTTP/1.1\r\nhost: upstream.test:8080\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n');
    expect(headText(head('GET', '/', { 'content-length': '0' }))).not.toContain('content-length');
  });

  it('writes a body over the coalescing limit after the head, not into its bytes', () => {
    const body = Buffer.alloc(COALESCE_LIMIT + 1, 'x');
    const request = head('POST', '/big', { 'x-long': 'v'.repeat(300) }, body);
    expect(request?.bytes.toString('latin1')).toBe(`POST /big HTTP/1.1\r\nhost: upstream.test:8080\r\nconnection: keep-alive\r\nx-long: ${'v'.repeat(300)}\r\ncontent-length: ${COALESCE_LIMIT + 1}\r\n\r\n`);
    expect(request?.body).toBe(body);
  });

  it('writes header values with latin1 characters byte for byte', () => {
    expect(head('GET', '/caf\u00e9', { 'x-name': 'Andr\u00e9' })?.bytes).toEqual(
      Buffer.concat([Buffer.from('GET /caf'), Buffer.from([0xe9]), Buffer.from(' HTTP/1.1\r\nhost: upstream.test:8080\r\nconnection: keep-alive\r\nx-name: Andr'), Buffer.from([0xe9]), Buffer.from('\r\n\r\n')]),
    );
  });

  it('does not reuse a connection after a body on a method that expects none', () => {
    expect(head('GET', '/', {}, Buffer.from('x'))).toMatchObject({ reusable: false, idempotent: true });
  });

  it.each([
    ['HEAD', '/', {}],
    ['CONNECT', '/', {}],
    ['GET', 'relative', {}],
    ['GET', '/a b', {}],
    ['GET', '/', { expect: '100-continue' }],
    ['GET', '/', { 'Transfer-Encoding': 'chunked' }],
    ['GET', '/', { connection: 'close' }],
    ['GET', '/', { upgrade: 'websocket' }],
    ['GET', '/', { 'x-injected': 'a\r\nx-smuggled: 1' }],
    ['GET', '/', { 'x-list': ['ok', 'bad\n'] }],
    ['GET', '/', { 'bad name': 'x' }],
    ['GET', '/', { host: 'a', Host: 'b' }],
  ])('leaves %s %s %j to the general client', (method, path, headers) => {
    expect(head(method, path, headers)).toBeNull();
  });

  it('leaves a declared length the body does not have to the general client', () => {
    expect(head('POST', '/', { 'content-length': '3' }, Buffer.from('hello'))).toBeNull();
    expect(head('POST', '/', { 'content-length': '5' }, Buffer.from('hello'))).not.toBeNull();
  });
});
