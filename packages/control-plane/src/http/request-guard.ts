import type { Request, RequestHandler } from 'express';
import { HttpError } from '@gatehouse/core';
import { JsonNestingScanner } from './nesting';

/**
 * The admin request guard's body half (decision 26): every body is limited before it is buffered and JSON bodies
 * are held to the nesting bound while they arrive, before any parser sees them.
 * - A declared `Content-Length` past the limit is refused at once, a body that grows past it as soon as it does:
 *   413 `{"message":"Request size limit exceeded"}`, and the connection is closed rather than drained.
 * - The limit is `body` (4 MiB, decision 16), or `largeBody` for the requests `isLarge` names (`POST /config`).
 * - Bodies are read as sent: a `Content-Encoding` other than `identity` is a 415.
 * The body is left in `req.body` as a Buffer for the decoder (body.ts) or the route that reads it itself.
 */
export interface BodyLimits {
  body: number;
  largeBody: number;
}

// DELETE bodies are read too: `DELETE /rbac/users/{u}/roles` names the roles in its body (Kong)
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function tooLarge(): HttpError {
  return new HttpError(413, 'Request size limit exceeded');
}

export function isJsonType(type: string | null): boolean {
  return type !== null && (type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type));
}

export function mediaType(req: Request): string | null {
  const header = req.headers['content-type'];
  return header ? header.split(';')[0]!.trim().toLowerCase() : null;
}

/** Reads the request's body, at most `limit` bytes, feeding each chunk to `inspect` as it arrives. */
export function readBoundedBody(req: Request, limit: number, inspect?: (chunk: Buffer) => void): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: unknown) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return stop(tooLarge());
      try {
        inspect?.(chunk);
      } catch (err) {
        return stop(err);
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      // the listeners (and with them the chunks: a second copy of a 64 MiB body) are not kept for the rest of the request
      req.off('data', onData);
      req.off('error', onError);
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      chunks.length = 0;
      resolve(body);
    };
    const onError = (err: Error) => stop(new HttpError(400, `Cannot read request body: ${err.message}`));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

export function requestGuard(limits: BodyLimits, isLarge: (req: Request) => boolean): RequestHandler {
  return (req, res, next) => {
    if (!BODY_METHODS.has(req.method)) return next();
    const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== '') return next(new HttpError(415, `Unsupported Content-Encoding: ${encoding}`));
    const scanner = isJsonType(mediaType(req)) ? new JsonNestingScanner() : null;
    readBoundedBody(req, isLarge(req) ? limits.largeBody : limits.body, scanner ? (chunk) => scanner.feed(chunk) : undefined).then(
      (body) => {
        req.body = body;
        next();
      },
      (err: unknown) => {
        // an answer before the whole body was read: the rest is not worth reading, the connection goes
        if (!req.complete) res.setHeader('Connection', 'close');
        next(err);
      },
    );
  };
}
