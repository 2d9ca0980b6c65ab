import type { Socket } from 'node:net';
import { deferToIoEnd, type DeferredWriter } from '../io-end-writes';
import { answerClientError } from '../proxy/client-errors';
import { HTTPParser, methods, type RequestParser } from './llhttp';
import { LaneRequest } from './lane-request';
import { LaneResponse, type LaneOutput } from './lane-response';
import { plainRequestHead } from './plain-request-head';
import { isSimple, type Head } from './simple-head';
import { inReadBuffer, kept, readIntoSharedBuffer, readThroughStream } from './shared-reads';

/** What the lane's connections need from the listener that owns them. */
export interface LaneHost {
  /** route, plugins, forwarding: the data plane's request handler */
  serve(req: LaneRequest, res: LaneResponse): void;
  /** node:http takes the connection over from here, the bytes it has not read put back */
  handOver(socket: Socket): void;
  forget(connection: LaneConnection): void;
  readonly keepAliveSeconds: number;
  /** the listener is closing: no connection is kept alive after its response */
  readonly closing: boolean;
  /** node:http's limit on a request head (bytes) */
  readonly maxHeaderSize: number;
}

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** bytes a client may send ahead (pipelined) while a response is in flight before its socket is paused */
const READ_AHEAD = 64 * 1024;

/**
 * One client connection on the front lane. Requests are taken one at a time: the bytes of a head are gathered up to
 * its blank line, read by the narrow path of `plainRequestHead` or else parsed by llhttp, and a simple request is
 * served; the next is read once its response has ended, so pipelined requests are answered in order. A request the
 * lane does not serve (a body, an upgrade, a parse error, a head past the size limit) hands the connection to
 * node:http at that request's first byte, with nothing in flight.
 */
export class LaneConnection implements LaneOutput, DeferredWriter {
  /** when the current head's first byte came (or the connection opened); -1 when no head is awaited */
  headStartedAt: number;
  /** when the connection went idle after a response; -1 while busy */
  idleSince = -1;
  private buffered: Buffer | null = null;
  private current: LaneResponse | null = null;
  private head: Head | null = null;
  private partialHeaders: string[] = [];
  private partialUrl = '';
  private requestKeepAlive = false;
  private reading = false;
  private gone = false;
  /** the last bytes of a kept-alive response, written at the end of the loop's I/O phase (see deferToIoEnd) */
  private deferred: Buffer | string | null = null;
  private deferredDone: (() => void) | undefined = undefined;
  private deferredResponse: LaneResponse | null = null;
  private readonly parser: RequestParser;

  constructor(
    readonly socket: Socket,
    private readonly host: LaneHost,
  ) {
    this.headStartedAt = Date.now();
    this.parser = new HTTPParser();
    this.parser.initialize(HTTPParser.REQUEST, {}, host.maxHeaderSize, HTTPParser.kLenientNone);
    this.parser[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      for (const item of headers) this.partialHeaders.push(item);
      this.partialUrl += url;
    };
    this.parser[HTTPParser.kOnHeadersComplete] = (major: number, minor: number, headers: string[] | undefined, method: number, url: string | undefined, _s: unknown, _m: unknown, upgrade: boolean, keepAlive: boolean) => {
      const raw = headers ?? this.partialHeaders;
      this.head = { major, minor, raw, method: methods[method] ?? '', url: url ?? this.partialUrl, upgrade, keepAlive, complete: false };
      this.partialHeaders = [];
      this.partialUrl = '';
      return 0;
    };
    this.parser[HTTPParser.kOnBody] = () => undefined;
    this.parser[HTTPParser.kOnMessageComplete] = () => {
      if (this.head !== null) this.head.complete = true;
    };
    socket.setNoDelay(true);
    if (!readIntoSharedBuffer(socket, this.onSharedBytes)) socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
  }

  get keepAliveSeconds(): number {
    return this.host.keepAliveSeconds;
  }

  get bytesWritten(): number {
    return this.socket.bytesWritten + (this.deferred?.length ?? 0);
  }

  get busy(): boolean {
    return this.current !== null;
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffered = this.buffered === null ? chunk : Buffer.concat([this.buffered, chunk]);
    if (this.current === null) this.next();
    else if (this.buffered.length > READ_AHEAD) this.socket.pause();
  };

  /** a read in the process's shared buffer: what is left unserved when it returns is copied */
  private readonly onSharedBytes = (bytes: Buffer): void => {
    this.onData(bytes);
    const left = this.buffered;
    if (left !== null && inReadBuffer(left)) this.buffered = Buffer.from(left);
  };

  private readonly onDrain = (): void => {
    this.current?.emit('drain');
  };

  // the client closed its side: as node:http does, the connection ends (a head cut short is a bad request)
  private readonly onEnd = (): void => {
    this.flushDeferred();
    if (this.current === null && this.buffered !== null) answerClientError(Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_EOF_STATE' }), this.socket);
    else this.socket.end();
  };

  private readonly onError = (): void => {
    this.socket.destroy();
  };

  private readonly onClose = (): void => {
    this.gone = true;
    this.host.forget(this);
    this.parser.close();
    const current = this.current;
    this.current = null;
    current?.closed(true);
  };

  /** Serves the requests waiting in the buffer, one at a time, until one is in flight or a head is incomplete. */
  private next(): void {
    if (this.reading) return;
    this.reading = true;
    try {
      while (this.current === null && this.buffered !== null && !this.gone) {
        if (!this.take(this.buffered)) return;
      }
      if (this.current === null && this.buffered === null) {
        this.headStartedAt = -1;
        this.idleSince = Date.now();
      }
      if (this.socket.isPaused() && (this.buffered?.length ?? 0) <= READ_AHEAD && !this.gone) this.socket.resume();
    } finally {
      this.reading = false;
    }
  }

  /** One request from the buffer; false when it has to wait (an incomplete head) or the connection was handed over. */
  private take(bytes: Buffer): boolean {
    const end = bytes.indexOf(HEAD_END);
    if (end < 0) {
      if (bytes.length > this.host.maxHeaderSize) return this.handOver(bytes);
      if (this.headStartedAt < 0) this.headStartedAt = Date.now();
      this.idleSince = -1;
      return false;
    }
    const headLength = end + HEAD_END.length;
    // a plain head is read by the narrow path; any other by llhttp (which leaves its state at a message's start)
    let head = headLength <= this.host.maxHeaderSize ? plainRequestHead(bytes, headLength) : null;
    if (head === null) {
      this.head = null;
      const parsed = this.parser.execute(headLength === bytes.length ? bytes : bytes.subarray(0, headLength));
      head = this.head as Head | null;
      if (typeof parsed !== 'number' || head === null || !head.complete) return this.handOver(bytes);
    }
    if (!isSimple(head)) return this.handOver(bytes);
    this.buffered = headLength === bytes.length ? null : bytes.subarray(headLength);
    this.headStartedAt = -1;
    this.idleSince = -1;
    this.requestKeepAlive = head.keepAlive;
    // a pipelined request: the response before it goes out first (its size and order stay as they were)
    this.flushDeferred();
    const req = new LaneRequest(this.socket, head.method, head.url, head.raw, head.major, head.minor);
    const res = new LaneResponse(req, this);
    this.current = res;
    this.host.serve(req, res);
    return true;
  }

  /** node:http takes the connection over at the request starting `bytes`; this lane lets it go */
  private handOver(bytes: Buffer): false {
    this.flushDeferred();
    this.buffered = null;
    this.gone = true;
    this.detach();
    const socket = this.socket;
    socket.pause();
    readThroughStream(socket);
    socket.unshift(kept(bytes));
    // node:http reads the bytes put back through the socket's stream, not straight from its handle
    const handle = (socket as Socket & { _handle?: { _consumed?: boolean } | null })._handle;
    if (handle) handle._consumed = true;
    this.host.handOver(socket);
    socket.resume();
    return false;
  }

  private detach(): void {
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    socket.off('error', this.onError);
    this.host.forget(this);
    this.parser.close();
  }

  mayKeepAlive(): boolean {
    return this.requestKeepAlive && !this.host.closing;
  }

  send(bytes: Buffer | string, last: boolean, keepAlive: boolean, done?: () => void): boolean {
    const socket = this.socket;
    if (!socket.writable) {
      // the connection is going: the response ends cut short, and the next request never comes
      if (last) {
        const current = this.current;
        this.current = null;
        current?.closed(true);
      }
      return false;
    }
    this.flushDeferred();
    if (!last) return socket.write(bytes);
    if (keepAlive && bytes.length > 0) {
      // the response's last bytes wait for the end of the loop's I/O phase, with the other connections' writes
      this.deferred = bytes;
      this.deferredDone = done;
      this.deferredResponse = this.current;
      deferToIoEnd(this);
      this.current = null;
      this.next();
      return true;
    }
    const ok = bytes.length === 0 ? (socket.write('', done), true) : socket.write(bytes, done);
    this.current = null;
    if (!keepAlive) {
      this.gone = true;
      socket.destroySoon();
      return ok;
    }
    this.next();
    return ok;
  }

  flushDeferred(): void {
    const bytes = this.deferred;
    if (bytes === null) return;
    const done = this.deferredDone;
    const response = this.deferredResponse;
    this.deferred = null;
    this.deferredDone = undefined;
    this.deferredResponse = null;
    if (this.socket.writable) this.socket.write(bytes, done);
    // the client went before the bytes could: the response ends cut short
    else response?.closed(true);
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Past its deadlines: 408 for a head too slow to come, a silent close for a keep-alive connection idle too long. */
  check(now: number, headersTimeout: number, keepAliveTimeout: number): void {
    if (this.current !== null || this.gone) return;
    this.flushDeferred();
    if (this.headStartedAt >= 0 && now - this.headStartedAt > headersTimeout) {
      this.gone = true;
      answerClientError(Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), this.socket);
    } else if (this.idleSince >= 0 && this.buffered === null && now - this.idleSince > keepAliveTimeout) this.socket.destroy();
  }

  /** the listener closes: an idle connection goes now */
  closeIdle(): void {
    this.flushDeferred();
    if (this.current === null) this.socket.destroy();
  }
}
