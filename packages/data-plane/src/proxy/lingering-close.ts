import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

/**
 * nginx's lingering close, for HTTP/1.1 connections whose response went out before the request's body was in (a
 * refusal: 413, 411, 401, 403, … while the client is still sending). Cutting such a connection at once makes the
 * client's kernel answer the bytes still coming with a reset, and a client that writes its whole body before reading
 * sees EPIPE or ECONNRESET instead of the answer. So the gateway only ends its side and goes on reading (and
 * discarding) until the client closes, as long as bytes keep coming:
 *   - `idleMs` (nginx's lingering_timeout, 5 s) without a byte, or `totalMs` (lingering_time, 30 s) in all: cut;
 *   - on a keep-alive connection Node reads and discards the rest of the body and the connection goes on; the same
 *     limits bound that discard.
 */
export interface LingerLimits {
  totalMs: number;
  idleMs: number;
}

export const DEFAULT_LINGER: LingerLimits = { totalMs: 30_000, idleMs: 5_000 };

const CURRENT_REQUEST = Symbol('gatehouse.currentRequest');
const LINGERING = Symbol('gatehouse.lingering');

interface TrackedSocket extends Socket {
  [CURRENT_REQUEST]?: IncomingMessage;
  [LINGERING]?: boolean;
}

/** Discards what the client still sends within `limits`, then cuts; stops early once a kept-alive request is whole. */
export function lingerOn(socket: Socket, request: IncomingMessage, limits: LingerLimits = DEFAULT_LINGER): void {
  const tracked = socket as TrackedSocket;
  if (tracked[LINGERING] === true || socket.destroyed) return;
  tracked[LINGERING] = true;
  // whatever the body was flowing into (a refused upstream request, a size limit) is gone: read it to discard it
  request.unpipe();
  request.resume();
  const started = Date.now();
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    // kept alive and the body is in: the connection serves its next request
    if (!socket.writableEnded && request.complete) return stop();
    const read = socket.bytesRead;
    if (read === seen || Date.now() - started >= limits.totalMs) {
      stop();
      socket.destroy();
      return;
    }
    seen = read;
  }, limits.idleMs);
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    tracked[LINGERING] = false;
    socket.off('close', stop);
  };
  socket.on('close', stop);
}

/**
 * Lingering close on one listener's HTTP/1.1 connections: `adopt` each connection once, `track` each request. Node
 * closes a `Connection: close` exchange with the socket's `destroySoon()` once the response is written; on an adopted
 * socket whose current request is not whole, that becomes: end the gateway's side, linger.
 */
export class LingeringClose {
  private readonly destroySoon: () => void;

  constructor(limits: LingerLimits = DEFAULT_LINGER) {
    this.destroySoon = function lingeringDestroySoon(this: TrackedSocket): void {
      const request = this[CURRENT_REQUEST];
      if (request === undefined || request.complete) return Socket.prototype.destroySoon.call(this);
      this.end();
      lingerOn(this, request, limits);
    };
  }

  adopt(socket: Socket): void {
    socket.destroySoon = this.destroySoon;
  }

  track(request: IncomingMessage): void {
    (request.socket as TrackedSocket)[CURRENT_REQUEST] = request;
  }
}
