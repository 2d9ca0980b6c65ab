import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type SecureClientSessionOptions } from 'node:http2';
import type { UpstreamTarget } from '../compile/types';
import { stampProxiedResponse } from '../observe/exchange-trace';
import { HOP_BY_HOP_RESPONSE, type Forwarder, type ForwardObserver } from '../proxy/forwarder';
import { sendUpstreamFailure } from '../proxy/responses';
import type { UpstreamRequest } from '../proxy/upstream-request';
import { parseGrpcTimeout } from './grpc-timeout';
import { GRPC_DEADLINE_EXCEEDED } from './grpc-status';
import { GrpcInterceptedResponse, rawHeadersOf, relayTransformed, trailerFields } from './grpc-response';
import { writeHeadFrom } from '../proxy/response-interception';

/**
 * Forwards gRPC calls over HTTP/2 (node:http2), one multiplexed session per upstream address: the client's request
 * stream and the upstream's response stream are relayed as they come (unary and all three streaming modes), with the
 * upstream's trailers (`grpc-status`, `grpc-message`, …) passed on. A call past its `grpc-timeout`, or idle for the
 * service's `read_timeout`, is cancelled upstream and answered DEADLINE_EXCEEDED (504 mapped, as Kong maps it).
 */
export class GrpcForwarder implements Forwarder {
  readonly name = 'grpc';
  private readonly sessions = new Map<string, ClientHttp2Session>();

  private sessionFor(target: UpstreamTarget): ClientHttp2Session {
    const known = this.sessions.get(target.poolKey);
    if (known !== undefined && !known.closed && !known.destroyed) return known;
    const tlsOptions: SecureClientSessionOptions =
      target.protocol !== 'https'
        ? {}
        : target.tls
          ? { ...target.tls.options, ...(target.sni ? { servername: target.sni } : {}) }
          : { rejectUnauthorized: target.tlsVerify, servername: target.sni ?? target.host };
    const session = connect(target.origin, { ...tlsOptions, timeout: target.connectTimeout });
    session.on('error', () => this.forget(target.poolKey, session));
    session.on('close', () => this.forget(target.poolKey, session));
    session.on('goaway', () => this.forget(target.poolKey, session));
    this.sessions.set(target.poolKey, session);
    return session;
  }

  private forget(key: string, session: ClientHttp2Session): void {
    if (this.sessions.get(key) === session) this.sessions.delete(key);
  }

  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer: ForwardObserver | null = null): void {
    const session = this.sessionFor(upstream.target);
    const start = () => this.call(session, req, res, upstream, observer);
    if (!session.connecting) return start();
    const onConnect = () => {
      session.off('error', onError);
      start();
    };
    // a session that never connects fails the call before any of its body was read: another target may take it
    const onError = (err: Error) => {
      session.off('connect', onConnect);
      const next = observer?.onFailure(err, true) ?? null;
      if (next !== null) return this.forward(req, res, next, observer);
      sendUpstreamFailure(res, err, upstream.trace, upstream.responseHeaders);
    };
    session.once('connect', onConnect);
    session.once('error', onError);
  }

  private call(session: ClientHttp2Session, req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer: ForwardObserver | null): void {
    const target = upstream.target;
    const headers: OutgoingHttpHeaders = {};
    for (const name in upstream.headers) if (name !== 'host' && name !== 'content-length') headers[name] = upstream.headers[name];
    headers[':method'] = 'POST';
    headers[':path'] = upstream.path;
    headers[':authority'] = String(upstream.headers.host ?? target.hostHeader);
    headers[':scheme'] = target.protocol;
    headers.te = 'trailers';
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(headers);
    } catch {
      sendUpstreamFailure(res, null, upstream.trace, upstream.responseHeaders);
      return;
    }
    let answered = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (answered) observer?.onEnd();
    };
    const expire = () => {
      if (finished) return;
      stream.close(constants.NGHTTP2_CANCEL);
      if (!answered) sendUpstreamFailure(res, 'timeout', upstream.trace, upstream.responseHeaders);
      else if (!res.writableEnded) {
        res.addTrailers({ 'grpc-status': String(GRPC_DEADLINE_EXCEEDED), 'grpc-message': 'DeadlineExceeded' });
        res.end();
      }
      finish();
    };
    const deadline = parseGrpcTimeout(req.headers['grpc-timeout']);
    const timer = deadline === null ? undefined : setTimeout(expire, Math.max(1, Math.ceil(deadline)));
    stream.setTimeout(target.readTimeout, expire);
    // the client went away: the call upstream is cancelled
    res.on('close', () => {
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
      finish();
    });
    stream.on('response', (head, flags) => this.relay(res, stream, head, flags, upstream, observer, () => (answered = true), finish));
    stream.on('error', (err: Error) => {
      if (answered) {
        if (!res.writableEnded) res.destroy();
      } else if (!finished) {
        sendUpstreamFailure(res, err, upstream.trace, upstream.responseHeaders);
        observer?.onFailure(err, false);
      }
      finish();
    });
    upstream.trace?.sent(upstream.path, target);
    const body = upstream.body ?? req;
    if (Buffer.isBuffer(body)) stream.end(body);
    else body.pipe(stream);
  }

  /** The upstream's head, then its messages, then its trailers, to the client. */
  private relay(
    res: ServerResponse,
    stream: ClientHttp2Stream,
    head: IncomingHttpHeaders,
    flags: number,
    upstream: UpstreamRequest,
    observer: ForwardObserver | null,
    onAnswer: () => void,
    finish: () => void,
  ): void {
    if (res.writableEnded || res.destroyed) return;
    onAnswer();
    const status = Number(head[':status'] ?? 200);
    observer?.onResponse(status);
    const endsNow = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    if (upstream.onResponse !== null) {
      // the plugins' response hooks see the head; their streamed transforms rewrite the messages as they come
      const response = new GrpcInterceptedResponse(status, rawHeadersOf(head), upstream.responseHeaders);
      upstream.onResponse(response);
      if (response.streams !== null) delete response.headers['content-length'];
      writeHeadFrom(res, response.status, response.headers, upstream.trace ?? null);
      if (response.streams !== null) {
        return relayTransformed(res, stream, response.streams, endsNow ? trailerFields(head, ['grpc-status', 'grpc-message']) : null, finish);
      }
    } else {
      this.writeHead(res, status, head, upstream);
    }
    // trailers-only (the status in the head, END_STREAM set): answered the same way, in one HEADERS frame
    if (endsNow) {
      res.end();
      return finish();
    }
    res.flushHeaders();
    stream.on('data', (chunk: Buffer) => {
      if (!res.write(chunk)) {
        stream.pause();
        res.once('drain', () => stream.resume());
      }
    });
    stream.on('trailers', (trailers: IncomingHttpHeaders) => res.addTrailers(trailerFields(trailers)));
    stream.on('end', () => {
      if (!res.writableEnded) res.end();
      finish();
    });
  }

  /** The upstream's head as it is, with the headers plugins set and the gateway's stamps. */
  private writeHead(res: ServerResponse, status: number, head: IncomingHttpHeaders, upstream: UpstreamRequest): void {
    const out: Record<string, string | string[]> = {};
    for (const name in head) {
      const value = head[name];
      if (name.charCodeAt(0) === 58 || HOP_BY_HOP_RESPONSE.has(name) || value === undefined) continue;
      out[name] = value;
    }
    if (upstream.responseHeaders !== null) for (const [name, value] of upstream.responseHeaders) out[name] = value;
    if (upstream.trace) {
      const list: string[] = [];
      stampProxiedResponse(list, upstream.trace, null);
      for (let i = 0; i < list.length; i += 2) out[list[i]!.toLowerCase()] = list[i + 1]!;
    }
    for (const name in out) res.setHeader(name, out[name]!);
    res.statusCode = status;
  }

  prune(active: ReadonlySet<string>): void {
    for (const [key, session] of this.sessions) {
      if (active.has(key)) continue;
      this.sessions.delete(key);
      session.close();
    }
  }

  async close(): Promise<void> {
    const closing = [...this.sessions.values()].map((session) => new Promise<void>((resolve) => session.close(() => resolve())));
    this.sessions.clear();
    await Promise.all(closing);
  }
}
