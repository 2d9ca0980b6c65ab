import type { ServerResponse } from 'node:http';
import { DEFAULT_MAX_BUFFERED_BODY, RequestRefused } from '@gatehouse/plugins';
import { stampProxiedResponse, type ExchangeTrace } from '../observe/exchange-trace';
import { HOP_BY_HOP_RESPONSE, type ForwardObserver } from './forwarder';
import { BoundedBody, InterceptedResponse, latin1, writeHeadFrom, type RawHeader } from './response-interception';
import { sendPluginResponse, sendUpstreamFailure } from './responses';
import type { ResponseInterceptor, UpstreamRequest } from './upstream-request';

/** Most header names cannot be hop-by-hop by their length alone: only those lengths are lower-cased and looked up. */
const HOP_BY_HOP_LENGTHS = new Set([...HOP_BY_HOP_RESPONSE].map((name) => name.length));

/** how long a response's end waits for a capture that stores elsewhere (ms) */
const CAPTURE_WAIT_MS = 1000;

/**
 * What an upstream client tells about one exchange, in undici's handler shape: `onConnect` hands over a way to abort
 * the exchange (valid until `onComplete` or `onError`); `onHeaders` and `onData` return false to ask for a pause,
 * and `resume` ends it.
 */
export interface UpstreamHandler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(statusCode: number, rawHeaders: readonly RawHeader[], resume: () => void): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  onError(err: Error): void;
}

/**
 * Relays one upstream response straight into the client response: no intermediate stream, backpressure through the
 * client's pause/resume.
 */
export class ResponseRelay implements UpstreamHandler {
  private abortUpstream: ((err?: Error) => void) | null = null;
  private resume: (() => void) | null = null;
  private done = false;
  /** the response the hooks saw, while its body is held back (transform) or copied (capture) */
  private intercepted: InterceptedResponse | null = null;
  private held: BoundedBody | null = null;
  private holding = false;
  /**
   * a body being copied (capture) goes out one chunk behind: the last one waits in `tail` until the copy is stored,
   * so a client that has the whole body finds the entry in place, even in a store another process holds
   */
  private tail: Buffer | null = null;
  /**
   * the Content-Length of a response relayed as it comes: a first chunk that long is the whole body, and goes out with
   * the head in one write (`ended`)
   */
  private wholeLength = -1;
  private ended = false;
  /** Kong's response_buffering: the head and body held until the body is whole (or past the limit) */
  private pending: { status: number; headers: string[]; chunks: Buffer[]; size: number } | null = null;
  /** plugin-set headers that replace the upstream's of the same name */
  private readonly extraHeaders: ReadonlyMap<string, string> | null;
  private readonly intercept: ResponseInterceptor | null;
  /** whether the request can be sent again (a retry): its body is absent or in memory */
  private readonly replayable: boolean;
  /** the request's id and timings, stamped on the response head */
  private readonly trace: ExchangeTrace | null;
  private readonly bufferAll: boolean;

  constructor(
    private readonly res: ServerResponse,
    upstream: UpstreamRequest,
    private readonly bodyLimit = DEFAULT_MAX_BUFFERED_BODY,
    /** a balanced request's observer, and how to send its next attempt */
    private readonly observer: ForwardObserver | null = null,
    private readonly retry: ((next: UpstreamRequest) => void) | null = null,
  ) {
    this.extraHeaders = upstream.responseHeaders;
    this.intercept = upstream.onResponse;
    this.replayable = upstream.body === null || Buffer.isBuffer(upstream.body);
    const trace = (this.trace = upstream.trace ?? null);
    this.bufferAll = upstream.bufferResponse === true;
    // an observed exchange listens to the response's end already and tells the relay
    if (trace !== null && trace.end !== null) trace.end.relay = this;
    else res.once('close', () => this.responseClosed());
  }

  /** the client's response closed: finished, or the client left before */
  responseClosed(): void {
    if (!this.done) {
      this.done = true;
      // the client left: the attempt ends without a verdict on the target
      this.observer?.onEnd();
      this.abortUpstream?.(new Error('client closed the connection'));
    }
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    // the client left while the request waited for a connection: it never goes out (nor holds a connection)
    if (this.done) abort(new Error('client closed the connection'));
  }

  onHeaders(statusCode: number, rawHeaders: readonly RawHeader[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.resume = resume;
    this.observer?.onResponse(statusCode);
    if (this.trace !== null) this.trace.upstreamStatus = statusCode;
    if (this.intercept !== null) return this.interceptHeaders(statusCode, rawHeaders);
    const headers: string[] = [];
    const extra = this.extraHeaders;
    const trace = this.trace;
    let via: string | null = null;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = latin1(rawHeaders[i]!);
      if (HOP_BY_HOP_LENGTHS.has(name.length) && HOP_BY_HOP_RESPONSE.has(name.toLowerCase())) continue;
      if (extra !== null && extra.has(name.toLowerCase())) continue;
      if (trace !== null && name.length === 3 && name.toLowerCase() === 'via') {
        via = via === null ? latin1(rawHeaders[i + 1]!) : `${via}, ${latin1(rawHeaders[i + 1]!)}`;
        continue;
      }
      const value = latin1(rawHeaders[i + 1]!);
      if (name.length === 14 && name.toLowerCase() === 'content-length') this.wholeLength = Number(value);
      headers.push(name, value);
    }
    if (extra !== null) for (const [name, value] of extra) headers.push(name, value);
    if (trace !== null) stampProxiedResponse(headers, trace, via);
    if (this.bufferAll) this.pending = { status: statusCode, headers, chunks: [], size: 0 };
    else this.res.writeHead(statusCode, headers);
    return true;
  }

  /** A held response goes out as it is so far (past the limit, or cut): from here it streams. */
  private release(): void {
    const { status, headers, chunks } = this.pending!;
    this.pending = null;
    this.res.writeHead(status, headers);
    for (const chunk of chunks) this.res.write(chunk);
  }

  /** The response hooks run; the head is written now unless a hook holds the body back. */
  private interceptHeaders(statusCode: number, rawHeaders: readonly RawHeader[]): boolean {
    const response = new InterceptedResponse(statusCode, rawHeaders, this.extraHeaders);
    this.intercept!(response);
    this.intercepted = response;
    if (response.transforms !== null || response.captures !== null) this.held = new BoundedBody(this.bodyLimit);
    if (response.transforms !== null) {
      this.holding = true;
      return true;
    }
    writeHeadFrom(this.res, response.status, response.headers, this.trace);
    return true;
  }

  /** A held-back body grew past the limit: the response goes out as it came, untransformed. */
  private letGo(): void {
    const response = this.intercepted!;
    this.holding = false;
    writeHeadFrom(this.res, response.status, response.headers, this.trace);
    for (const chunk of this.held!.take()) this.res.write(chunk);
  }

  onData(chunk: Buffer): boolean {
    const pending = this.pending;
    if (pending !== null) {
      pending.chunks.push(chunk);
      pending.size += chunk.length;
      if (pending.size > this.bodyLimit) this.release();
      return true;
    }
    const held = this.held;
    if (held !== null) {
      held.add(chunk);
      if (this.holding) {
        if (!held.overflowed) return true;
        this.letGo();
      } else if (!held.overflowed) {
        const previous = this.tail;
        this.tail = chunk;
        if (previous === null) return true;
        chunk = previous;
      } else if (this.tail !== null) {
        // past the limit nothing is copied: what waited goes out now
        this.res.write(this.tail);
        this.tail = null;
      }
    } else if (chunk.length === this.wholeLength) {
      this.ended = true;
      this.res.end(chunk);
      return true;
    }
    this.wholeLength = -1;
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.resume!);
    return false;
  }

  onComplete(): void {
    this.done = true;
    this.observer?.onEnd();
    if (this.ended) return;
    const pending = this.pending;
    if (pending !== null) {
      this.pending = null;
      this.res.writeHead(pending.status, pending.headers);
      this.res.end(pending.chunks.length === 1 ? pending.chunks[0] : Buffer.concat(pending.chunks, pending.size));
      return;
    }
    const held = this.held;
    if (held === null || held.overflowed) {
      if (this.holding) this.letGo();
      this.res.end();
      return;
    }
    const response = this.intercepted!;
    const body = held.whole();
    if (!this.holding) return this.finish(response, body);
    const transformed = applyTransforms(response.transforms!, body);
    if (!(transformed instanceof Promise)) return this.finishTransformed(response, transformed);
    // a transform that asks another service (ai-response-transformer) holds the answer until it is done
    void transformed.then((next) => {
      if (!this.res.destroyed) this.finishTransformed(response, next);
    });
  }

  private finishTransformed(response: InterceptedResponse, body: Buffer): void {
    delete response.headers['transfer-encoding'];
    response.headers['content-length'] = String(body.length);
    writeHeadFrom(this.res, response.status, response.headers, this.trace);
    this.finish(response, body);
  }

  private finish(response: InterceptedResponse, body: Buffer): void {
    const tail = this.tail;
    this.tail = null;
    const end = this.holding ? () => this.res.end(body) : () => (tail === null ? this.res.end() : this.res.end(tail));
    // copies are taken before the last chunk goes out: one stored elsewhere (a promise) holds it until it is stored
    let storing: Array<Promise<unknown>> | null = null;
    if (response.captures !== null) {
      for (const capture of response.captures) {
        try {
          const stored = capture(body);
          if (stored instanceof Promise) (storing ??= []).push(stored);
        } catch {
          // a failed copy never affects the response
        }
      }
    }
    if (storing === null) {
      end();
      return;
    }
    // a store that does not answer holds the end for a second at most
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CAPTURE_WAIT_MS)));
    void Promise.race([Promise.allSettled(storing), waited]).then(() => {
      clearTimeout(timer);
      end();
    });
  }

  onError(err: Error): void {
    if (this.done) return;
    // the whole body went out already: what failed after it does not concern the client
    if (this.ended) return this.onComplete();
    this.done = true;
    if (err instanceof RequestRefused && !this.res.headersSent) return sendPluginResponse(this.res, err.response);
    // a held response cut short goes out as far as it came, then the connection is cut, as when streamed
    if (this.pending !== null) this.release();
    if (this.observer !== null) {
      if (this.res.headersSent) this.observer.onEnd();
      else if (!this.res.destroyed) {
        const next = this.observer.onFailure(err, this.replayable);
        if (next !== null && this.retry !== null) return this.retry(next);
      }
    }
    if (this.res.headersSent) this.res.destroy(err);
    else sendUpstreamFailure(this.res, err, this.trace, this.extraHeaders);
  }
}

/** Runs the response hooks' body transforms in order; a transform that fails leaves the body as it was. */
function applyTransforms(transforms: ReadonlyArray<(body: Buffer) => Buffer | Promise<Buffer>>, body: Buffer, from = 0): Buffer | Promise<Buffer> {
  for (let i = from; i < transforms.length; i++) {
    let next: Buffer | Promise<Buffer>;
    try {
      next = transforms[i]!(body);
    } catch {
      // a body the transform cannot read passes unchanged
      continue;
    }
    if (next instanceof Promise) {
      const previous = body;
      return next.then(
        (value) => applyTransforms(transforms, value, i + 1),
        () => applyTransforms(transforms, previous, i + 1),
      );
    }
    body = next;
  }
  return body;
}
