import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpstreamTarget } from '../compile/types';
import { Http1Pool } from '../http1-client/pool';
import { requestHead, type Http1Request } from '../http1-client/request-head';
import type { ForwardObserver, Forwarder } from './forwarder';
import { ResponseRelay, type UpstreamHandler } from './response-relay';
import { UndiciForwarder, type UndiciForwarderOptions } from './undici-forwarder';
import type { UpstreamRequest } from './upstream-request';

/**
 * Forwards plain-HTTP requests whose body is absent or in memory over the gateway's own keep-alive HTTP/1.1 client
 * (one write per request, Node's llhttp for the response), and everything else through undici: HTTPS upstreams,
 * streamed bodies, upgrades, and requests this client does not send as they are (see `requestHead`). Both relay the
 * response the same way (ResponseRelay).
 */
export class Http1Forwarder implements Forwarder {
  readonly name = 'http1';
  private readonly pools = new Map<string, Http1Pool>();
  private readonly general: UndiciForwarder;
  /** a cap on connections per upstream is undici's to keep: everything goes through it then */
  private readonly capped: boolean;

  constructor(private readonly options: UndiciForwarderOptions = {}) {
    this.general = new UndiciForwarder(options);
    this.capped = options.connections != null;
  }

  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer: ForwardObserver | null = null): void {
    const retry = observer === null ? null : (next: UpstreamRequest) => this.forward(req, res, next, observer);
    const relay = new ResponseRelay(res, upstream, this.options.maxBufferedBody, observer, retry);
    const request = this.narrow(upstream);
    if (request === null) this.general.send(relay, upstream);
    else this.poolFor(upstream.target).request(request, relay);
  }

  /**
   * Sends a prepared request on the pool of its target (another front end than node:http's, for instance); null when
   * this client does not send it, and the caller must use a general one.
   */
  request(upstream: UpstreamRequest, handler: UpstreamHandler): boolean {
    const request = this.narrow(upstream);
    if (request === null) return false;
    this.poolFor(upstream.target).request(request, handler);
    return true;
  }

  /** the request as this client sends it, or null when it is one for undici */
  private narrow(upstream: UpstreamRequest): Http1Request | null {
    const { target, body } = upstream;
    if (this.capped || target.protocol !== 'http' || upstream.upgrade || !(body === null || Buffer.isBuffer(body))) return null;
    return requestHead(upstream.method, upstream.path, upstream.headers, body, target.hostHeader, target.readTimeout);
  }

  private poolFor(target: UpstreamTarget): Http1Pool {
    let pool = this.pools.get(target.poolKey);
    if (pool === undefined) {
      pool = new Http1Pool(target, this.options.keepAliveTimeout ?? 4_000);
      this.pools.set(target.poolKey, pool);
    }
    return pool;
  }

  prune(active: ReadonlySet<string>): void {
    for (const [key, pool] of this.pools) {
      if (active.has(key)) continue;
      this.pools.delete(key);
      // requests in flight finish on their connections
      void pool.close();
    }
    this.general.prune(active);
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all([...pools.map((pool) => pool.close()), this.general.close()]);
  }
}
