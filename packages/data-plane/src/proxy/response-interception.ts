import { stampProxiedResponse, type ExchangeTrace } from '../observe/exchange-trace';
import type { ServerResponse } from 'node:http';
import type { UpstreamResponse } from '@gatehouse/plugins';
import { HOP_BY_HOP_RESPONSE } from './forwarder';

/** One header name or value as a client reads it off the wire: bytes (undici) or a latin1 string (llhttp). */
export type RawHeader = Buffer | string;

export const latin1 = (raw: RawHeader): string => (typeof raw === 'string' ? raw : raw.toString('latin1'));

/**
 * One upstream response seen by the plugins' response hooks before it is sent. Hooks edit `headers` in place and may
 * ask for the body: `transformBody` holds the response back until the body is complete (bounded by `limit`; past it,
 * the response passes as it came), `captureBody` copies it while it streams.
 */
export class InterceptedResponse implements UpstreamResponse {
  readonly headers: Record<string, string | string[]> = {};
  readonly setByPlugins: ReadonlySet<string> | undefined;
  readonly replaced: Record<string, string | string[]> | undefined;
  transforms: Array<(body: Buffer) => Buffer | Promise<Buffer>> | null = null;
  captures: Array<(body: Buffer) => void | Promise<unknown>> | null = null;

  constructor(
    public status: number,
    rawHeaders: readonly RawHeader[],
    extra: ReadonlyMap<string, string> | null,
  ) {
    let replaced: Record<string, string | string[]> | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = latin1(rawHeaders[i]!).toLowerCase();
      if (HOP_BY_HOP_RESPONSE.has(name)) continue;
      const into = extra !== null && extra.has(name) ? (replaced ??= {}) : this.headers;
      const value = latin1(rawHeaders[i + 1]!);
      const seen = into[name];
      into[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    this.replaced = replaced;
    if (extra !== null) for (const [name, value] of extra) this.headers[name] = value;
    this.setByPlugins = extra !== null ? new Set(extra.keys()) : undefined;
  }

  transformBody(transform: (body: Buffer) => Buffer | Promise<Buffer>): void {
    (this.transforms ??= []).push(transform);
  }

  setStatus(status: number): void {
    this.status = status;
  }

  captureBody(capture: (body: Buffer) => void | Promise<unknown>): void {
    (this.captures ??= []).push(capture);
  }
}

/** Collects a body up to a limit; `overflowed` once the limit was passed (and the chunks were let go). */
export class BoundedBody {
  private chunks: Buffer[] = [];
  private size = 0;
  overflowed = false;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    if (this.overflowed) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.overflowed = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(chunk);
  }

  /** the chunks so far, handed over once (used when a held-back response must be let go) */
  take(): Buffer[] {
    const chunks = this.chunks;
    this.chunks = [];
    return chunks;
  }

  whole(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/** Writes a status and a header record (arrays as repeated headers). */
export function writeHeadFrom(res: ServerResponse, status: number, headers: Record<string, string | string[]>, trace: ExchangeTrace | null = null): void {
  const list: string[] = [];
  let via: string | null = null;
  for (const name in headers) {
    const value = headers[name]!;
    // with a trace, the upstream's Via is continued by the gateway's own (stampProxiedResponse)
    if (trace !== null && name.toLowerCase() === 'via') {
      const joined = Array.isArray(value) ? value.join(', ') : value;
      via = via === null ? joined : `${via}, ${joined}`;
      continue;
    }
    if (Array.isArray(value)) for (const item of value) list.push(name, item);
    else list.push(name, value);
  }
  if (trace !== null) stampProxiedResponse(list, trace, via);
  res.writeHead(status, list);
}
