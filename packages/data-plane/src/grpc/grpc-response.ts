import type { ServerResponse } from 'node:http';
import type { ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import { PassThrough, type Readable } from 'node:stream';
import type { ResponseTrailers } from '@gatehouse/plugins';
import { InterceptedResponse } from '../proxy/response-interception';

type StreamWrap = (body: Readable, trailers: ResponseTrailers) => Readable;

/**
 * The upstream's answer to a gRPC call as the plugins' response hooks see it: headers and status as on any response,
 * and body transforms that stream (grpc-web and grpc-gateway rewrite each message as it comes).
 */
export class GrpcInterceptedResponse extends InterceptedResponse {
  streams: StreamWrap[] | null = null;

  streamBody(wrap: StreamWrap): void {
    (this.streams ??= []).push(wrap);
  }
}

/** The head of an HTTP/2 response as a raw header list, pseudo-headers left out. */
export function rawHeadersOf(head: IncomingHttpHeaders): Buffer[] {
  const raw: Buffer[] = [];
  for (const name in head) {
    if (name.charCodeAt(0) === 58) continue;
    const value = head[name];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) raw.push(Buffer.from(name, 'latin1'), Buffer.from(String(item), 'latin1'));
  }
  return raw;
}

/** Trailer fields as a flat record (repeated ones joined), pseudo-headers left out. */
export function trailerFields(trailers: IncomingHttpHeaders, only?: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name in trailers) {
    const value = trailers[name];
    if (name.charCodeAt(0) === 58 || value === undefined || (only !== undefined && !only.includes(name))) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return kept;
}

/**
 * Relays the upstream's messages through the plugins' streamed transforms to the client, chunk by chunk, then its
 * trailers unless a transform took them into the body. `headTrailers` is set for an answer without a body (the
 * status in its head): the transforms see an empty body and those fields as its trailers.
 */
export function relayTransformed(res: ServerResponse, stream: ClientHttp2Stream, wraps: readonly StreamWrap[], headTrailers: Record<string, string> | null, finish: () => void): void {
  const source = new PassThrough();
  let trailers: Record<string, string> = headTrailers ?? {};
  let taken = false;
  const view: ResponseTrailers = {
    take: () => {
      taken = true;
      return trailers;
    },
  };
  let body: Readable = source;
  for (const wrap of wraps) body = wrap(body, view);
  body.on('error', () => {
    if (!res.destroyed) res.destroy();
    finish();
  });
  body.on('end', () => {
    if (!taken && headTrailers === null && Object.keys(trailers).length > 0) res.addTrailers(trailers);
    if (!res.writableEnded) res.end();
    finish();
  });
  body.pipe(res, { end: false });
  if (headTrailers !== null) {
    stream.resume();
    source.end();
    return;
  }
  stream.on('trailers', (received: IncomingHttpHeaders) => (trailers = trailerFields(received)));
  stream.pipe(source);
}
