/** One HTTP/1.1 request ready for the wire: its head (and a small body) as the bytes of one write, a larger body after. */
export interface Http1Request {
  /** the head, followed by the body when that is at most `COALESCE_LIMIT` bytes */
  bytes: Buffer;
  /** a body over `COALESCE_LIMIT` bytes, written after `bytes` (corked with them: one writev) */
  body: Buffer | null;
  /** how long the upstream may stay silent once the request is out (ms): 504 past it */
  readTimeout: number;
  /** safe to send again on a fresh connection when a kept-alive one turns out closed (RFC 9110 §9.2.2) */
  idempotent: boolean;
  /** the connection may carry another request after this one (no body on a method that expects none) */
  reusable: boolean;
}

/** the largest body sent in one buffer with its head */
export const COALESCE_LIMIT = 16 * 1024;
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);
/** methods whose requests carry a body: an empty one is announced as `content-length: 0` */
const EXPECTS_PAYLOAD = new Set(['PUT', 'POST', 'PATCH', 'QUERY', 'PROPFIND', 'PROPPATCH']);
/** the methods this client sends; others (HEAD, CONNECT, extension methods) go through the general client */
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'QUERY', 'PROPFIND', 'PROPPATCH']);

const DIGITS = /^\d+$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** what a header value may not hold (Node's and undici's rule): control characters other than tab */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** what a request target may not hold (undici's rule) */
const INVALID_PATH = /[^\u0021-\u00ff]/;

/**
 * Header names the head builder looks at (host, content-length) or leaves to the general client (the rest: they ask
 * for something this client does not do). Most names are ruled out by their length alone.
 */
const SPECIAL = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);
/** 1 at the lengths of those names: a typed array read per header, not a hash lookup */
const SPECIAL_LENGTHS = new Uint8Array(32);
for (const name of SPECIAL) SPECIAL_LENGTHS[name.length] = 1;

/**
 * The request in the bytes undici would send for it (`host` first, `connection: keep-alive`, the headers as given,
 * `content-length` last), or null when it needs the general client: a method or header this narrow client does not
 * send (HEAD, CONNECT, extension methods, `expect`, `transfer-encoding`, `connection`, `upgrade`), or anything undici
 * would refuse (an invalid name, value or target), which the general client then answers as it always did.
 */
export function requestHead(
  method: string,
  path: string,
  headers: Readonly<Record<string, string | string[]>>,
  body: Buffer | null,
  defaultHost: string,
  readTimeout: number,
): Http1Request | null {
  if (!METHODS.has(method)) return null;
  if (path.charCodeAt(0) !== 47 /* / */ || INVALID_PATH.test(path)) return null;
  let host: string | null = null;
  let declaredLength: string | null = null;
  let lines = '';
  for (const name in headers) {
    const value = headers[name]!;
    if (SPECIAL_LENGTHS[name.length] === 1) {
      const lower = name.toLowerCase();
      if (SPECIAL.has(lower)) {
        if (typeof value !== 'string' || INVALID_VALUE.test(value)) return null;
        if (lower === 'host' && host === null) host = value;
        else if (lower === 'content-length' && declaredLength === null) declaredLength = value;
        else return null;
        continue;
      }
    }
    if (!TOKEN.test(name)) return null;
    if (typeof value === 'string') {
      if (INVALID_VALUE.test(value)) return null;
      lines += `${name}: ${value}\r\n`;
    } else {
      for (const item of value) {
        if (typeof item !== 'string' || INVALID_VALUE.test(item)) return null;
        lines += `${name}: ${item}\r\n`;
      }
    }
  }
  const expectsPayload = EXPECTS_PAYLOAD.has(method);
  const length = body === null ? 0 : body.length;
  // undici refuses a declared length that is not a number, or that a body does not have; without a body it drops it
  if (declaredLength !== null && (length > 0 ? declaredLength !== String(length) : !DIGITS.test(declaredLength))) return null;
  const framing = length > 0 || expectsPayload ? `content-length: ${length}\r\n` : '';
  const head = `${method} ${path} HTTP/1.1\r\nhost: ${host ?? defaultHost}\r\nconnection: keep-alive\r\n${lines}${framing}\r\n`;
  // The head is built as a string (concatenation makes a rope, not a copy) and encoded once, natively, into the bytes
  // the socket writes. Writing each piece into the buffer from JavaScript allocates less but costs 2–8 µs more a
  // request: header values made by concatenation (a traceparent, a forwarded-for list) are ropes, which JavaScript
  // reads a character at a time many times slower than the runtime copies them whole. The memory is Node's 8 KiB
  // pool: a write waiting on a slow peer holds the pool it was cut from, which should stay small.
  const inline = length > 0 && length <= COALESCE_LIMIT;
  const bytes = Buffer.allocUnsafe(inline ? head.length + length : head.length);
  bytes.write(head, 0, 'latin1');
  if (inline) body!.copy(bytes, head.length);
  return { bytes, body: length > 0 && !inline ? body : null, readTimeout, idempotent: IDEMPOTENT.has(method), reusable: length === 0 || expectsPayload };
}
