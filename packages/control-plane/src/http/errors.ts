import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DbError, Errors, HttpError } from '@gatehouse/core';
import { isDatabaseUnreachable } from '../db/unreachable';

export type AdminLogger = (message: string, err?: unknown) => void;

/** body-parser's own errors carry a `type` and a 4xx status */
function bodyParserError(err: unknown): { status: number; message: string } | null {
  const e = err as { type?: unknown; status?: unknown; message?: unknown };
  if (!e || typeof e.type !== 'string' || typeof e.status !== 'number') return null;
  if (e.type === 'entity.too.large') return { status: 413, message: 'Request size limit exceeded' };
  if (e.type === 'entity.parse.failed') return { status: 400, message: 'Cannot parse JSON body' };
  if (e.status >= 400 && e.status < 500) return { status: e.status, message: String(e.message ?? 'Bad request') };
  return null;
}

/** other request faults raised by Express or Node (a path that does not decode, a corrupt gzip body) */
function clientError(err: unknown): { status: number; message: string } | null {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : null;
  if (status === null || status < 400 || status >= 500) return null;
  return { status, message: e.expose === false ? 'Bad request' : String(e.message ?? 'Bad request') };
}

export function notFound(): RequestHandler {
  return (_req, _res, next) => next(Errors.notFound());
}

/**
 * Errors → Kong bodies: DbError → `{code, name, message, fields}`, HttpError → `{message}`; the database out of reach
 * → 503 `{message}`; anything else is an infrastructure fault: logged, 500 `{"message":"An unexpected error occurred"}`.
 */
export function errorResponder(log: AdminLogger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof DbError) {
      res.status(err.status).json(err.toBody());
      return;
    }
    if (err instanceof HttpError) {
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      if (err.body === null) res.status(err.status).end();
      else res.status(err.status).json(err.body);
      return;
    }
    if (isDatabaseUnreachable(err)) {
      // nothing was written (or the commit's answer was lost): the client may try again once the database is back
      res.setHeader('Retry-After', '1');
      res.status(503).json({ message: 'Service unavailable: the database is unreachable' });
      return;
    }
    const parsed = bodyParserError(err) ?? clientError(err);
    if (parsed) {
      res.status(parsed.status).json({ message: parsed.message });
      return;
    }
    log(`${req.method} ${req.originalUrl} failed`, err);
    res.status(500).json({ message: 'An unexpected error occurred' });
  };
}
