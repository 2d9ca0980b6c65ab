import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import { checkHeader, headFacts, serialiseHead, type HeadFacts } from './response-head';
import type { LaneRequest } from './lane-request';

/** The connection a lane response writes to, in order: one response at a time. */
export interface LaneOutput {
  /** Keep-Alive's timeout in seconds (0: none) and whether the connection may stay open after this response */
  readonly keepAliveSeconds: number;
  mayKeepAlive(): boolean;
  /** writes bytes; `last` ends the response (`done` once they are flushed); false when the socket's buffer is full */
  send(bytes: Buffer | string, last: boolean, keepAlive: boolean, done?: () => void): boolean;
  /** cuts the connection */
  destroy(err?: Error): void;
  readonly bytesWritten: number;
}

const CRLF = '\r\n';
const LAST_CHUNK = '0\r\n\r\n';
const NOTHING = Buffer.alloc(0);
type HeaderValue = string | number | readonly string[];
/** first chunks below this size wait for the end of the tick to share the head's write */
const HOLD_LIMIT = 16 * 1024;

function flushHeld(res: LaneResponse): void {
  res.flushHeld();
}

/** `value` as header lines */
const lines = (value: HeaderValue): readonly string[] => (Array.isArray(value) ? (value as readonly string[]) : [String(value)]);

/**
 * The response of a request the front lane serves: the part of node:http's ServerResponse the forwarders and the
 * gateway's own answers use. The head waits for the first body bytes and goes out with them as one buffer.
 */
export class LaneResponse extends EventEmitter {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  private ended = false;
  /** headers set one by one before the head: lower-case name → [name, value] */
  private set: Map<string, [string, HeaderValue]> | null = null;
  /** the head, once written, until body bytes take it along */
  private head: string | null = null;
  private chunked = false;
  /** a first body chunk kept back until the end of the tick, to go out with the head and the end */
  private held: Buffer | null = null;
  private keepAlive = false;
  /** HEAD, 204, 304: a head without a body */
  private bodyless: boolean;

  constructor(
    readonly req: LaneRequest,
    private readonly out: LaneOutput,
  ) {
    super();
    this.bodyless = req.method === 'HEAD';
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    for (const line of lines(value)) checkHeader(name, line);
    (this.set ??= new Map()).set(name.toLowerCase(), [name, value]);
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.set?.get(name.toLowerCase())?.[1];
  }

  hasHeader(name: string): boolean {
    return this.set?.has(name.toLowerCase()) ?? false;
  }

  removeHeader(name: string): void {
    this.set?.delete(name.toLowerCase());
  }

  getHeaders(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    if (this.set !== null) for (const [lower, [, value]] of this.set) headers[lower] = value as OutgoingHttpHeaders[string];
    return headers;
  }

  /** `headers`: a list (`[name, value, …]`, repeats kept) or a record; they replace headers set before of the same name */
  writeHead(status: number, reasonOrHeaders?: string | OutgoingHttpHeaders | readonly string[], headers?: OutgoingHttpHeaders | readonly string[]): this {
    if (this.headersSent) throw Object.assign(new Error('Cannot write headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    const given = typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders;
    if (typeof reasonOrHeaders === 'string') this.statusMessage = reasonOrHeaders;
    this.statusCode = status;
    const list: string[] = [];
    if (this.set !== null) {
      const replaced = given === undefined ? null : new Set(Array.isArray(given) ? (given as string[]).filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()) : Object.keys(given).map((n) => n.toLowerCase()));
      for (const [lower, [name, value]] of this.set) if (replaced === null || !replaced.has(lower)) for (const line of lines(value)) list.push(name, line);
    }
    if (Array.isArray(given)) for (let i = 0; i < given.length; i += 2) list.push(given[i] as string, String(given[i + 1]));
    else if (given !== undefined) for (const name in given as OutgoingHttpHeaders) {
      const value = (given as OutgoingHttpHeaders)[name];
      if (value !== undefined) for (const line of lines(value)) list.push(name, line);
    }
    this.startHead(list, headFacts(list), -1);
    return this;
  }

  /** the head is made: framing decided as node:http decides it; `knownLength` ≥ 0 when end() brings the whole body */
  private startHead(list: string[], facts: HeadFacts, knownLength: number): void {
    const status = this.statusCode;
    if (status === 204 || status === 304 || (status >= 100 && status < 200)) this.bodyless = true;
    let keepAlive = this.out.mayKeepAlive();
    if (facts.connection !== null && facts.connection.includes('close')) keepAlive = false;
    let contentLength = -1;
    if (!this.bodyless && !facts.hasLength && !facts.hasEncoding) {
      if (knownLength >= 0) contentLength = knownLength;
      else if (this.req.httpVersionMinor === 1 && this.req.httpVersionMajor === 1) this.chunked = true;
      // an HTTP/1.0 client reads the body to the end of the connection
      else keepAlive = false;
    }
    this.keepAlive = keepAlive;
    this.headersSent = true;
    this.head = serialiseHead(status, this.statusMessage, list, facts, { keepAlive, keepAliveSeconds: this.out.keepAliveSeconds, chunked: this.chunked, contentLength });
  }

  /** the head made from the headers set one by one, when the body starts without writeHead */
  private implicitHead(knownLength: number): void {
    const list: string[] = [];
    if (this.set !== null) for (const [name, value] of this.set.values()) for (const line of lines(value)) list.push(name, line);
    this.startHead(list, headFacts(list), knownLength);
  }

  /**
   * The bytes of a body chunk: the head before it while that has not gone out, then the chunk in its framing. The
   * head is encoded once, natively, into the same buffer as the chunk (see `requestHead` for why not in JavaScript).
   */
  private frame(chunk: Buffer, last: boolean): Buffer {
    const head = this.head;
    this.head = null;
    if (this.bodyless || (chunk.length === 0 && !last)) {
      if (head === null) return NOTHING;
      const bytes = Buffer.allocUnsafe(head.length);
      bytes.write(head, 0, 'latin1');
      return bytes;
    }
    if (!this.chunked) {
      if (head === null) return chunk;
      const bytes = Buffer.allocUnsafe(head.length + chunk.length);
      bytes.write(head, 0, 'latin1');
      chunk.copy(bytes, head.length);
      return bytes;
    }
    const size = chunk.length === 0 ? '' : `${chunk.length.toString(16)}${CRLF}`;
    const prefix = (head ?? '') + size;
    const suffix = (chunk.length === 0 ? '' : CRLF) + (last ? LAST_CHUNK : '');
    const bytes = Buffer.allocUnsafe(prefix.length + chunk.length + suffix.length);
    bytes.write(prefix, 0, 'latin1');
    chunk.copy(bytes, prefix.length);
    bytes.write(suffix, prefix.length + chunk.length, 'latin1');
    return bytes;
  }

  write(chunk: Buffer | string, encoding?: BufferEncoding | (() => void)): boolean {
    if (this.writableEnded || this.destroyed) return false;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk;
    if (!this.headersSent) this.implicitHead(-1);
    if (this.head !== null && this.held === null && bytes.length > 0 && bytes.length < HOLD_LIMIT) {
      // the first chunk waits with the head for the end of this tick: a small answer goes out in one write
      this.held = bytes;
      process.nextTick(flushHeld, this);
      return true;
    }
    this.flushHeld();
    const framed = this.frame(bytes, false);
    return framed.length === 0 ? true : this.out.send(framed, false, this.keepAlive);
  }

  /** the held first chunk goes out (with the head) */
  flushHeld(): void {
    const held = this.held;
    if (held === null || this.writableEnded) return;
    this.held = null;
    if (!this.destroyed) this.out.send(this.frame(held, false), false, this.keepAlive);
  }

  end(chunk?: Buffer | string | (() => void), encoding?: BufferEncoding | (() => void)): this {
    if (this.writableEnded || this.destroyed) return this;
    this.writableEnded = true;
    let bytes = chunk === undefined || typeof chunk === 'function' ? NOTHING : typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk;
    if (!this.headersSent) this.implicitHead(this.bodyless ? -1 : bytes.length);
    const held = this.held;
    if (held !== null) {
      this.held = null;
      bytes = bytes.length === 0 ? held : Buffer.concat([held, bytes]);
    }
    this.out.send(this.frame(bytes, true), true, this.keepAlive, () => this.finished());
    return this;
  }

  flushHeaders(): void {
    if (!this.headersSent) this.implicitHead(-1);
    const framed = this.frame(NOTHING, false);
    if (framed.length > 0) this.out.send(framed, false, this.keepAlive);
  }

  private finished(): void {
    this.writableFinished = true;
    this.emit('finish');
    this.closed();
  }

  /** the response is done, or its connection went before it was */
  closed(cut = false): void {
    if (this.ended) return;
    this.ended = true;
    if (cut) this.destroyed = true;
    this.emit('close');
  }

  destroy(err?: Error): this {
    if (!this.ended) this.out.destroy(err);
    return this;
  }
}
