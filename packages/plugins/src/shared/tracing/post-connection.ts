import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { trustedCaBundle } from '../trusted-cas';
import { ResponseReader, type ReadResponse } from './response-reader';

/** how long an idle connection is kept */
const IDLE_MS = 60_000;

/** A request failed on a reused connection before any of its answer came: the receiver had closed it. */
export class StaleConnectionError extends Error {}

/**
 * One keep-alive HTTP/1.1 connection to a receiver, for one request at a time: the request's head and body leave in
 * one write, and the answer is read by `ResponseReader`. While idle the socket does not keep the process alive.
 */
export class PostConnection {
  private reader: ResponseReader | null = null;
  private answered = false;
  private settle: ((err: Error | null, response?: ReadResponse) => void) | null = null;
  /** requests this connection carried */
  private used = 0;
  private gone = false;

  private constructor(
    private readonly socket: Socket,
    private readonly onGone: (connection: PostConnection) => void,
  ) {
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('end', () => this.closed(null));
    socket.on('close', () => this.closed(null));
    socket.on('error', (err) => this.closed(err));
    socket.on('timeout', () => {
      // a receiver too slow to answer is not a stale connection: no second try
      this.answered = true;
      this.closed(new Error(this.settle === null ? 'idle' : 'timeout waiting for the receiver'));
    });
  }

  /** connects to `url`'s host (TLS for https) within `connectTimeoutMs` (0: no bound) */
  static open(url: URL, connectTimeoutMs: number, onGone: (connection: PostConnection) => void): Promise<PostConnection> {
    const https = url.protocol === 'https:';
    const port = Number(url.port || (https ? 443 : 80));
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return new Promise((resolve, reject) => {
      // SNI names a host, never an address
      // the process's trusted CAs (Kong's lua_ssl_trusted_certificate) when set, else the system's
      const ca = https ? (trustedCaBundle() ?? undefined) : undefined;
      const socket = https ? tlsConnect({ host, port, servername: isIP(host) === 0 ? host : undefined, ca }) : netConnect({ host, port });
      const timer = connectTimeoutMs > 0 ? setTimeout(() => fail(new Error(`connect timeout after ${connectTimeoutMs} ms`)), connectTimeoutMs) : undefined;
      const fail = (err: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      socket.once('error', fail);
      socket.once(https ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.off('error', fail);
        socket.setNoDelay(true);
        resolve(new PostConnection(socket, onGone));
      });
    });
  }

  /** whether this connection carried a request before */
  get reused(): boolean {
    return this.used > 0;
  }

  /** sends `head` and `body`; the answer, or an error (`StaleConnectionError` when a reused connection was closed) */
  request(head: string, body: Uint8Array | string, timeoutMs: number): Promise<ReadResponse> {
    if (this.gone) return Promise.reject(new StaleConnectionError('connection closed'));
    this.used++;
    this.reader = new ResponseReader();
    this.answered = false;
    this.socket.ref();
    this.socket.setTimeout(timeoutMs);
    const done = new Promise<ReadResponse>((resolve, reject) => {
      this.settle = (err, response) => {
        this.settle = null;
        this.reader = null;
        if (err !== null) return reject(err);
        this.socket.setTimeout(IDLE_MS);
        this.socket.unref();
        resolve(response!);
      };
    });
    this.socket.cork();
    this.socket.write(head, 'latin1');
    this.socket.write(body);
    this.socket.uncork();
    return done;
  }

  destroy(): void {
    this.gone = true;
    this.socket.destroy();
  }

  private received(chunk: Buffer): void {
    if (this.reader === null) return this.closed(new Error('bytes from the receiver without a request'));
    this.answered = true;
    let response: ReadResponse | null;
    try {
      response = this.reader.feed(chunk);
    } catch (err) {
      return this.closed(err as Error);
    }
    if (response !== null) this.finish(response);
  }

  private finish(response: ReadResponse): void {
    if (!response.keepAlive) this.destroy();
    this.settle?.(null, response);
  }

  private closed(err: Error | null): void {
    const ending = this.reader?.end() ?? null;
    if (ending !== null && err === null) return this.finish(ending);
    const settle = this.settle;
    if (!this.gone) {
      this.destroy();
      this.onGone(this);
    }
    if (settle === null) return;
    const reason = err ?? new Error('the receiver closed the connection before answering');
    settle(this.used > 1 && !this.answered ? new StaleConnectionError(reason.message) : reason);
  }
}
