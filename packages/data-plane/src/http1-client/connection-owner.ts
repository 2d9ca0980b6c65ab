import type { UpstreamHandler } from '../proxy/response-relay';
import type { Http1Connection } from './connection';
import type { Http1Request } from './request-head';

/** What a connection tells the pool that holds it. */
export interface ConnectionOwner {
  /** how long an idle connection is kept when the upstream names no shorter time (ms) */
  readonly keepAliveTimeout: number;
  /** the exchange is complete and the connection can carry another, for `keepAliveMs` at most */
  idle(connection: Http1Connection, keepAliveMs: number): void;
  /** the connection is closed */
  gone(connection: Http1Connection): void;
  /** a request lost with a kept-alive connection before any answer, sent again on a new connection */
  resend(request: Http1Request, handler: UpstreamHandler): void;
}

export interface ConnectionTarget {
  host: string;
  port: number;
  connectTimeout: number;
}
