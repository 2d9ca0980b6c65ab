import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamTarget } from '../compile/types';
import type { ForwardObserver, Forwarder } from './forwarder';
import { ResponseRelay } from './response-relay';
import type { UpstreamRequest } from './upstream-request';

export interface UndiciForwarderOptions {
  /** connections per upstream; null = as many as needed */
  connections?: number | null;
  /** how long an idle upstream connection is kept (ms) */
  keepAliveTimeout?: number;
  /** the most of a response body held for plugins that transform or capture it (bytes) */
  maxBufferedBody?: number;
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
          ...(target.protocol === 'https'
            ? target.tls
              ? { ...target.tls.options, ...(target.sni ? { servername: target.sni } : {}) }
              : { rejectUnauthorized: target.tlsVerify, servername: target.sni ?? target.host }
            : {}),
        },
      });
      this.pools.set(target.poolKey, pool);
    }
    return pool;
  }

  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer: ForwardObserver | null = null): void {
    const retry = observer === null ? null : (next: UpstreamRequest) => this.forward(req, res, next, observer);
    this.send(new ResponseRelay(res, upstream, this.options.maxBufferedBody, observer, retry), upstream);
  }

  /** Sends the request with a relay already made (another forwarder's, handing over what it does not handle). */
  send(relay: ResponseRelay, upstream: UpstreamRequest): void {
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
