import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

/** Request headers Node keeps only the first of when a client repeats them (node:http's `matchKnownFields`). */
const FIRST_WINS = new Set([
  'content-type',
  'content-length',
  'user-agent',
  'referer',
  'host',
  'authorization',
  'proxy-authorization',
  'if-modified-since',
  'if-unmodified-since',
  'from',
  'location',
  'max-forwards',
  'retry-after',
  'etag',
  'last-modified',
  'server',
  'age',
  'expires',
]);

/** `headers` as node:http builds them from the raw list: lower-case names, repeated lines joined as Node joins them. */
export function headerRecord(raw: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const seen = headers[name];
    if (seen === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (name === 'set-cookie') (seen as string[]).push(value);
    else if (FIRST_WINS.has(name)) continue;
    else headers[name] = `${seen as string}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return headers;
}

/**
 * A request the front lane serves: the part of node:http's IncomingMessage the data plane and its plugins read.
 * The lane only takes requests without a body, so the request is whole (and its "stream" ended) when it is made.
 */
export class LaneRequest {
  readonly complete = true;
  readonly readableEnded = true;
  readonly aborted = false;
  headers: IncomingHttpHeaders;
  private distinct: Record<string, string[]> | null = null;

  constructor(
    readonly socket: Socket,
    readonly method: string,
    readonly url: string,
    public rawHeaders: string[],
    readonly httpVersionMajor: number,
    readonly httpVersionMinor: number,
  ) {
    this.headers = headerRecord(rawHeaders);
  }

  get httpVersion(): string {
    return this.httpVersionMajor === 1 && this.httpVersionMinor === 1 ? '1.1' : `${this.httpVersionMajor}.${this.httpVersionMinor}`;
  }

  get connection(): Socket {
    return this.socket;
  }

  /** every header line by lower-case name, as node:http's `headersDistinct` */
  get headersDistinct(): Record<string, string[]> {
    if (this.distinct !== null) return this.distinct;
    const distinct: Record<string, string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) (distinct[raw[i]!.toLowerCase()] ??= []).push(raw[i + 1]!);
    return (this.distinct = distinct);
  }

  // the stream surface of a body-less request: nothing to read, nothing to stop
  resume(): this {
    return this;
  }

  unpipe(): this {
    return this;
  }

  on(): this {
    return this;
  }

  once(): this {
    return this;
  }

  off(): this {
    return this;
  }

  removeListener(): this {
    return this;
  }
}
