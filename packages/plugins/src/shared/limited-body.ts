import type { Readable } from 'node:stream';
import { RequestRefused, type PluginResponse, type PluginRuntime } from '../contract';

/** `GATEHOUSE_MAX_BUFFERED_BODY`'s default: 8 MiB. */
export const DEFAULT_MAX_BUFFERED_BODY = 8 * 1024 * 1024;

/** the most a data plane buffers of one body (request or response) for a plugin that needs it whole */
export function maxBufferedBody(runtime: PluginRuntime): number {
  return runtime.maxBufferedBody ?? DEFAULT_MAX_BUFFERED_BODY;
}

/**
 * Kong's answer to a body past the limit (kong-reference decision 15). No `connection: close`: Node would destroy the
 * socket as soon as the answer is written, with the client's body still arriving, and the reset can cost the client
 * the answer; the data plane discards the rest of the body instead and cuts the connection after a grace period.
 */
export const BODY_TOO_LARGE: PluginResponse = Object.freeze({
  status: 413,
  body: Object.freeze({ message: 'Request size limit exceeded' }),
});

/**
 * Thrown (as a rejection) by `readLimitedBody` when a body is larger than the limit; the data plane answers it with
 * `BODY_TOO_LARGE` whichever plugin was reading.
 */
export class BodyTooLargeError extends RequestRefused {
  constructor(readonly limit: number) {
    super(BODY_TOO_LARGE);
    this.name = 'BodyTooLargeError';
  }
}

/** Kong's answer to a body past a size limit (request-size-limiting answers it too). */
export const REQUEST_TOO_LARGE = BODY_TOO_LARGE;

/** a refusal for a body that a stream wrapper found too large while it streamed */
export function requestTooLarge(limit = 0): RequestRefused {
  return new BodyTooLargeError(limit);
}

/**
 * Parses a size as `GATEHOUSE_MAX_BUFFERED_BODY` gives it: bytes, or a number with a `k` or `m` suffix (KiB, MiB;
 * either case). Throws on anything else.
 */
export function parseByteSize(value: string, name = 'size'): number {
  const m = /^\s*(\d+)\s*([kKmM]?)\s*$/.exec(value);
  if (!m) throw new Error(`${name} must be a number of bytes with an optional k or m suffix, got '${value}'`);
  const unit = m[2]!.toLowerCase();
  return Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
}

/**
 * The one way the gateway buffers a request body (key_in_body, hmac-auth's body digest, oauth2's endpoints and any
 * later reader): reads the whole stream unless it grows past `limit` bytes, in which case it rejects with a
 * `BodyTooLargeError` at once, keeps none of it and stops listening (nothing past the limit is ever held). A declared
 * `Content-Length` above the limit is refused before a byte is read.
 */
export function readLimitedBody(stream: Readable, limit: number, declaredLength?: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    if (declaredLength !== undefined && Number(declaredLength) > limit) return reject(new BodyTooLargeError(limit));
    if (stream.readableEnded) return resolve(Buffer.alloc(0));
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}
