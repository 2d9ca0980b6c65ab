import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamTarget } from '../compile/types';
import { stampGatewayResponse, stampProxiedResponse, type ExchangeTrace } from '../observe/exchange-trace';
import { HOP_BY_HOP_RESPONSE, isTimeout, type Forwarder } from './forwarder';

/** Most header names cannot be hop-by-hop by their length alone: only those lengths are lower-cased and looked up. */
const HOP_BY_HOP_LENGTHS = new Set([...HOP_BY_HOP_RESPONSE].map((name) => name.length));
import { ProxyErrors, sendFixed } from './responses';
import type { UpstreamRequest } from './upstream-request';

export interface UndiciForwarderOptions {
  /** connections per upstream; null = as many as needed */
  connections?: number | null;
  /** how long an idle upstream connection is kept (ms) */
  keepAliveTimeout?: number;
}

/**
 * Relays one upstream response straight into the client response: no intermediate stream, backpressure through
 * undici's pause/resume.
 */
class ResponseRelay implements Dispatcher.DispatchHandler {
  private abortUpstream: ((err?: Error) => void) | null = null;
  private resume: (() => void) | null = null;
  private done = false;

  constructor(
    private readonly res: ServerResponse,
    /** plugin-set headers that replace the upstream's of the same name */
    private readonly extraHeaders: ReadonlyMap<string, string> | null = null,
    /** the request's id and timings, stamped on the response head */
    private readonly trace: ExchangeTrace | null = null,
  ) {
    res.once('close', () => {
      if (!this.done) {
        this.done = true;
        this.abortUpstream?.(new Error('client closed the connection'));
      }
    });
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.resume = resume;
    const headers: string[] = [];
    const extra = this.extraHeaders;
    const trace = this.trace;
    let via: string | null = null;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1');
      if (HOP_BY_HOP_LENGTHS.has(name.length) && HOP_BY_HOP_RESPONSE.has(name.toLowerCase())) continue;
      if (extra !== null && extra.has(name.toLowerCase())) continue;
      if (trace !== null && name.length === 3 && name.toLowerCase() === 'via') {
        via = via === null ? rawHeaders[i + 1]!.toString('latin1') : `${via}, ${rawHeaders[i + 1]!.toString('latin1')}`;
        continue;
      }
      headers.push(name, rawHeaders[i + 1]!.toString('latin1'));
    }
    if (extra !== null) for (const [name, value] of extra) headers.push(name, value);
    if (trace !== null) stampProxiedResponse(headers, trace, via);
    this.res.writeHead(statusCode, headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.resume!);
    return false;
  }

  onComplete(): void {
    this.done = true;
    this.res.end();
  }

  onError(err: Error): void {
    if (this.done) return;
    this.done = true;
    if (this.res.headersSent) this.res.destroy(err);
    else {
      stampGatewayResponse(this.res, this.trace);
      sendFixed(this.res, isTimeout(err) ? ProxyErrors.gatewayTimeout : ProxyErrors.badGateway);
    }
  }
}

/** Forwards through one undici Pool per upstream: keep-alive, no pipelining, bodies streamed both ways. */
export class UndiciForwarder implements Forwarder {
  readonly name = 'undici';
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: UndiciForwarderOptions = {}) {}

  private poolFor(target: UpstreamTarget): Pool {
    let pool = this.pools.get(target.poolKey);
    if (pool === undefined) {
      pool = new Pool(target.origin, {
        connections: this.options.connections ?? null,
        pipelining: 1,
        keepAliveTimeout: this.options.keepAliveTimeout ?? 4_000,
        connect: {
          timeout: target.connectTimeout,
          ...(target.protocol === 'https' ? { rejectUnauthorized: target.tlsVerify, servername: target.host } : {}),
        },
      });
      this.pools.set(target.poolKey, pool);
    }
    return pool;
  }

  forward(_req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest): void {
    const relay = new ResponseRelay(res, upstream.responseHeaders, upstream.trace ?? null);
    try {
      this.poolFor(upstream.target).dispatch(
        {
          method: upstream.method as Dispatcher.HttpMethod,
          path: upstream.path,
          headers: upstream.headers,
          body: upstream.body,
          headersTimeout: upstream.target.readTimeout,
          bodyTimeout: upstream.target.readTimeout,
        },
        relay,
      );
    } catch (err) {
      relay.onError(err as Error);
    }
  }

  prune(active: ReadonlySet<string>): void {
    for (const [key, pool] of this.pools) {
      if (active.has(key)) continue;
      this.pools.delete(key);
      // close() lets the requests already dispatched finish
      pool.close().catch(() => pool.destroy());
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }
}
