import { connect, type Socket } from 'node:net';
import { deferToIoEnd, type DeferredWriter } from '../io-end-writes';
import type { UpstreamHandler } from '../proxy/response-relay';
import { badUpgrade, bodyTimeout, connectTimeout, headersTimeout, invalidResponse, isConnectionLoss, otherSideClosed } from './errors';
import type { Http1Request } from './request-head';
import { framedBodyLength, keepAliveHint, STOP_AFTER_HEAD } from './response-framing';
import { ResponseParser, type ResponseEvents } from './response-parser';
import { simpleResponseHead } from './simple-response-head';
import type { ConnectionOwner, ConnectionTarget } from './connection-owner';

/** what every upstream connection of the process reads into (the most one read brings, as Node's own reads) */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * One keep-alive HTTP/1.1 connection to an upstream, one exchange at a time: the request goes out in one write, the
 * response head is parsed by llhttp (Node's own parser, strict: a response with bad framing, both Content-Length and
 * Transfer-Encoding, or bad header syntax fails the exchange with a 502), or, when it is whole in the response's
 * first read and plain, by the narrow path of `simpleResponseHead` (a subset of what llhttp takes, read alike), a
 * body framed by Content-Length is then read by the connection itself and others by llhttp, and the response is
 * handed to the handler as it comes. The connection goes back to its pool only after a complete response that allows
 * it, with nothing after it.
 */
export class Http1Connection implements DeferredWriter, ResponseEvents {
  readonly socket: Socket;
  /** until when an idle connection may be taken again (ms since the epoch); the pool sets it */
  keepAliveUntil = 0;
  private readonly parser: ResponseParser;
  private request: Http1Request | null = null;
  private handler: UpstreamHandler | null = null;
  private connected = false;
  /** exchanges completed on this connection: one that has served before may have been closed under the next */
  private served = 0;
  private retried = false;
  /** head lines that came in parts (a long head), before the head completed */
  private parts: string[] | null = null;
  /** the exchange's final (non-1xx) head arrived; its body is being read */
  private headed = false;
  /** a response to the exchange began: from then on it is never sent again */
  private began = false;
  private keepAlive = false;
  private keepAliveMs = 0;
  /** bytes of a Content-Length body the connection reads itself (see `framedBodyLength`) still to come; 0 otherwise */
  private bodyLeft = 0;
  /** the exchange completed inside the current parse: the connection is settled once the parse is over */
  private completed = false;
  /** the upstream sent a message after the complete response: the connection is not used again */
  private unsolicited = false;
  private paused = false;
  private timeoutMs: number;
  /** why the exchange fails, reported once the socket has closed */
  private failure: Error | null = null;
  /** the request's bytes, written at the end of the loop's I/O phase (see deferToIoEnd) */
  private deferred: Buffer | null = null;

  constructor(
    private readonly owner: ConnectionOwner,
    target: ConnectionTarget,
  ) {
    const host = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
    // the response is read into the process's read buffer and parsed at once (Node's `onread`): no memory is
    // allocated per read, and the bytes skip the stream's queue; body chunks reach the handler as copies (`body`)
    const onread = { buffer: READ_BUFFER, callback: (read: number, buffer: Uint8Array) => this.received(buffer as Buffer, read) };
    const socket = (this.socket = connect({ host, port: target.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000, onread }));
    this.timeoutMs = target.connectTimeout;
    socket.setTimeout(target.connectTimeout);
    this.parser = new ResponseParser(this);
    socket.on('connect', () => {
      this.connected = true;
      this.setTimeout(this.request?.readTimeout ?? this.timeoutMs);
    });
    socket.on('end', () => this.ended());
    socket.on('timeout', () => this.timedOut());
    socket.on('error', (err) => (this.failure ??= err));
    socket.on('close', () => this.closed());
  }

  /** Aborts the exchange in flight (the client left): the connection is closed, as its answer may still come. */
  readonly abort = (err?: Error): void => {
    const handler = this.handler;
    if (handler === null) return;
    this.handler = null;
    this.request = null;
    this.socket.destroy();
    handler.onError(err ?? new Error('request aborted'));
  };

  /** Ends a pause the handler asked for (its client can take more). */
  readonly resume = (): void => {
    if (!this.paused) return;
    this.paused = false;
    this.socket.setTimeout(this.timeoutMs);
    this.socket.resume();
  };

  /** Sends one request; the handler hears of its response. `retried`: this is the request's second attempt. */
  send(request: Http1Request, handler: UpstreamHandler, retried = false): void {
    this.request = request;
    this.handler = handler;
    this.retried = retried;
    this.headed = false;
    this.began = false;
    this.parts = null;
    handler.onConnect(this.abort);
    // aborted at once (the client left already): abort() closed the connection
    if (this.handler !== handler) return;
    if (this.connected) this.setTimeout(request.readTimeout);
    const { bytes, body } = request;
    const socket = this.socket;
    if (body === null) {
      // the request goes out at the end of the loop's I/O phase, with the other exchanges' writes
      this.deferred = bytes;
      deferToIoEnd(this);
    } else {
      this.flushDeferred();
      socket.cork();
      socket.write(bytes);
      socket.write(body);
      socket.uncork();
    }
  }

  close(): void {
    this.socket.destroy();
  }

  flushDeferred(): void {
    const bytes = this.deferred;
    if (bytes === null) return;
    this.deferred = null;
    // an exchange aborted before its turn ended closed the socket: nothing is sent
    if (this.socket.destroyed) return;
    this.socket.write(bytes);
  }

  private setTimeout(ms: number): void {
    if (ms === this.timeoutMs) return;
    this.timeoutMs = ms;
    this.socket.setTimeout(ms);
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    // the upstream is not waited for while the client is slow to read
    this.socket.setTimeout(0);
    this.socket.pause();
  }

  /**
   * `read` bytes arrived at the start of `buffer` (the process's read buffer, overwritten by the next read). Always
   * true: a pause the handler asks for is made by `pause`.
   */
  private received(buffer: Buffer, read: number): boolean {
    if (this.handler === null) {
      // bytes on an idle connection: nothing asked for them, nothing is sent on it again
      this.socket.destroy();
      return true;
    }
    // the response's first bytes, llhttp untouched since the last response: a plain head is read by the narrow path
    const simple = this.began ? null : simpleResponseHead(buffer, read);
    this.began = true;
    let at = 0;
    if (simple !== null) {
      at = simple.bodyStart;
      this.headersComplete(simple.headers, simple.status, false, simple.keepAlive);
      // no body: the response is whole with its head, and bytes after it are a message nothing asked for
      if (this.bodyLeft === 0 && this.handler !== null && this.failure === null) {
        if (at < read) this.unsolicited = true;
        this.messageComplete();
      }
    } else if (this.bodyLeft === 0) {
      const parsed = this.parser.llhttp.execute(buffer.subarray(0, read));
      if (typeof parsed !== 'number') this.failure ??= invalidResponse(parsed);
      else at = parsed;
    }
    if (this.bodyLeft > 0 && this.failure === null) this.readBody(buffer, at, read);
    if (this.failure !== null) {
      this.socket.destroy();
      return true;
    }
    if (this.completed) this.settle();
    return true;
  }

  /**
   * The body bytes in buffer[from, to) of a response whose body the connection reads itself: handed over as a copy
   * (the read buffer is overwritten by the next read); the response completes with its last byte, and bytes after it
   * are a message nothing asked for.
   */
  private readBody(buffer: Buffer, from: number, to: number): void {
    const take = Math.min(this.bodyLeft, to - from);
    this.bodyLeft -= take;
    if (take > 0) this.body(Buffer.from(buffer.subarray(from, from + take)));
    if (this.bodyLeft > 0) return;
    if (from + take < to) this.unsolicited = true;
    this.parser.restartIfStopped();
    this.messageComplete();
  }

  /** After a complete response: back to the pool, or closed when the response or request wants it so. */
  private settle(): void {
    this.completed = false;
    // a pause the finished exchange asked for does not carry over to the next
    this.resume();
    if (this.keepAlive && !this.unsolicited && !this.socket.destroyed) this.owner.idle(this, this.keepAliveMs);
    else this.socket.destroy();
  }

  messageBegins(): number {
    if (this.handler === null) this.unsolicited = true;
    return 0;
  }

  headerPart(headers: string[]): void {
    // after the head, parts are trailers: dropped, as the general client's relay drops them
    if (this.headed || this.handler === null) return;
    const parts = (this.parts ??= []);
    for (const item of headers) parts.push(item);
  }

  headersComplete(given: string[] | undefined, status: number, upgrade: boolean, keepAlive: boolean): number {
    const handler = this.handler;
    const headers = given ?? this.parts ?? [];
    this.parts = null;
    if (handler === null || this.failure !== null) return 0;
    if (upgrade || status === 101) {
      this.failure = badUpgrade();
      return 0;
    }
    // an interim response (100 Continue, 103 Early Hints): the final one follows
    if (status < 200) return 0;
    this.headed = true;
    this.keepAlive = keepAlive && this.request!.reusable;
    this.keepAliveMs = this.owner.keepAliveTimeout;
    if (this.keepAlive) {
      const hint = keepAliveHint(headers);
      if (hint !== null && hint <= 0) this.keepAlive = false;
      else if (hint !== null) this.keepAliveMs = hint;
    }
    if (!handler.onHeaders(status, headers, this.resume)) this.pause();
    if (this.handler !== handler) return 0;
    // a body framed by Content-Length is read by the connection itself: llhttp stops after the head (see framedBodyLength)
    this.bodyLeft = framedBodyLength(status, headers);
    return this.bodyLeft > 0 ? STOP_AFTER_HEAD : 0;
  }

  body(chunk: Buffer): void {
    const handler = this.handler;
    if (handler === null || this.failure !== null) return;
    // llhttp's binding hands each body chunk over as a copy: it does not lie in the read buffer the next read overwrites
    if (!handler.onData(chunk)) this.pause();
  }

  messageComplete(): number {
    // the head of a body read by the connection itself (framedBodyLength): the response completes with its last byte
    if (this.bodyLeft > 0) return 0;
    const handler = this.handler;
    // the end of an interim response, or of one nobody waits for any more
    if (handler === null || !this.headed || this.failure !== null) return 0;
    this.handler = null;
    this.request = null;
    this.served++;
    this.completed = true;
    handler.onComplete();
    return 0;
  }

  private ended(): void {
    // a response that runs to the end of the connection is complete now; any other is cut short
    if (this.handler !== null && this.headed && this.failure === null && this.bodyLeft === 0) {
      this.parser.llhttp.finish();
      this.completed = false;
    }
    this.socket.destroy();
  }

  private timedOut(): void {
    if (this.handler !== null) this.failure ??= !this.connected ? connectTimeout() : !this.headed ? headersTimeout() : bodyTimeout();
    this.socket.destroy();
  }

  private closed(): void {
    this.parser.llhttp.close();
    this.owner.gone(this);
    const handler = this.handler;
    const request = this.request;
    if (handler === null || request === null) return;
    this.handler = null;
    this.request = null;
    const err = this.failure ?? otherSideClosed();
    // a kept-alive connection closed under a request nothing answered yet: an idempotent one is sent once more
    if (this.served > 0 && !this.began && !this.retried && request.idempotent && isConnectionLoss(err)) return this.owner.resend(request, handler);
    handler.onError(err);
  }
}
