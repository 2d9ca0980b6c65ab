import type { UpstreamHandler } from '../proxy/response-relay';
import { Http1Connection } from './connection';
import type { ConnectionOwner, ConnectionTarget } from './connection-owner';
import type { Http1Request } from './request-head';

/** how often idle connections past their keep-alive time are closed (ms); a connection is also checked when taken */
const SWEEP_EVERY_MS = 1_000;

/**
 * The connections to one upstream (one pool key): as many as the requests in flight need, each reused after a
 * complete response, the most recently used first; an idle one is closed after `keepAliveTimeout` (or the shorter
 * time the upstream names).
 */
export class Http1Pool implements ConnectionOwner {
  private readonly connections = new Set<Http1Connection>();
  /** idle connections, the most recently used last */
  private readonly idleList: Http1Connection[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;
  private drained: (() => void) | null = null;

  constructor(
    private readonly target: ConnectionTarget,
    readonly keepAliveTimeout: number,
  ) {}

  /** in-flight and idle connections (for tests and stats) */
  get size(): number {
    return this.connections.size;
  }

  /** Sends a request on an idle connection, or a new one; the handler hears of its response. */
  request(request: Http1Request, handler: UpstreamHandler): void {
    const now = Date.now();
    let connection = this.idleList.pop();
    while (connection !== undefined && (connection.keepAliveUntil <= now || connection.socket.destroyed)) {
      connection.close();
      connection = this.idleList.pop();
    }
    (connection ?? this.open()).send(request, handler);
  }

  resend(request: Http1Request, handler: UpstreamHandler): void {
    this.open().send(request, handler, true);
  }

  idle(connection: Http1Connection, keepAliveMs: number): void {
    if (this.closing) return connection.close();
    connection.keepAliveUntil = Date.now() + keepAliveMs;
    this.idleList.push(connection);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  gone(connection: Http1Connection): void {
    this.connections.delete(connection);
    const at = this.idleList.indexOf(connection);
    if (at >= 0) this.idleList.splice(at, 1);
    if (this.connections.size === 0) {
      this.stopSweeping();
      this.drained?.();
    }
  }

  /** Closes the idle connections now and the others once their exchange is over. */
  close(): Promise<void> {
    this.closing = true;
    for (const connection of this.idleList.splice(0)) connection.close();
    this.stopSweeping();
    if (this.connections.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.drained = resolve));
  }

  /** Closes every connection now, the exchanges on them failing. */
  destroy(): void {
    this.closing = true;
    for (const connection of [...this.connections]) connection.close();
  }

  private open(): Http1Connection {
    const connection = new Http1Connection(this, this.target);
    this.connections.add(connection);
    return connection;
  }

  private sweep(): void {
    const now = Date.now();
    for (const connection of this.idleList.filter((c) => c.keepAliveUntil <= now)) connection.close();
    if (this.idleList.length === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper === null) return;
    clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
