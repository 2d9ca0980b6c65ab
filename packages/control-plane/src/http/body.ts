import bodyParser from 'body-parser';
import busboy from 'busboy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { decodeFormPairs, Errors, HttpError } from '@gatehouse/core';

/**
 * Kong's request bodies: JSON, form-urlencoded and multipart, the two form encodings decoded with Kong's rules
 * (dotted keys, `a[]`, `a[1]`, repeated keys) into `req.body`; `res.locals.form` says the values are still strings
 * for the schema to coerce. Bodies of other types → 415; unparsable JSON → 400; oversized → 413.
 */
// DELETE bodies are read too: `DELETE /rbac/users/{u}/roles` names the roles in its body (Kong)
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function mediaType(req: Request): string | null {
  const header = req.headers['content-type'];
  if (!header) return null;
  return header.split(';')[0]!.trim().toLowerCase();
}

function isJson(type: string): boolean {
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type);
}

function parseJson(buffer: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch {
    throw Errors.badJson();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw Errors.badJson();
  return value as Record<string, unknown>;
}

function parseMultipart(req: Request, buffer: Buffer): Promise<Array<[string, string]>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8' });
    } catch (err) {
      reject(new HttpError(400, `Cannot parse multipart body: ${(err as Error).message}`));
      return;
    }
    const pairs: Array<[string, string]> = [];
    const files: Array<Promise<void>> = [];
    parser.on('field', (name, value) => pairs.push([name, value]));
    parser.on('file', (name, stream) => {
      // a file part is a field whose value is the file's content (certificates, keys)
      const index = pairs.push([name, '']) - 1;
      const chunks: Buffer[] = [];
      files.push(
        new Promise<void>((done) => {
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            pairs[index] = [name, Buffer.concat(chunks).toString('utf8')];
            done();
          });
        }),
      );
    });
    parser.on('error', (err: Error) => reject(new HttpError(400, `Cannot parse multipart body: ${err.message}`)));
    parser.on('close', () => Promise.all(files).then(() => resolve(pairs), reject));
    parser.end(buffer);
  });
}

/**
 * `passThrough` names requests whose body a route reads itself (a whole declarative configuration is larger than
 * any entity body and may be YAML).
 */
export function bodyReader(limit: string | number, passThrough?: (req: Request) => boolean): RequestHandler[] {
  const parse = bodyParser.raw({ type: () => true, limit });
  const raw: RequestHandler = (req, res, next) => (passThrough?.(req) ? next() : parse(req, res, next));
  const decode = async (req: Request, res: Response, next: NextFunction) => {
    if (passThrough?.(req)) {
      res.locals.form = false;
      return next();
    }
    try {
      const buffer: Buffer | undefined = Buffer.isBuffer(req.body) ? req.body : undefined;
      res.locals.form = false;
      if (!WRITE_METHODS.has(req.method)) {
        req.body = {};
        return next();
      }
      const type = mediaType(req);
      if (type && isJson(type)) {
        if (!buffer || buffer.length === 0) throw Errors.badJson();
        req.body = parseJson(buffer);
      } else if (type === 'application/x-www-form-urlencoded') {
        req.body = decodeFormPairs([...new URLSearchParams(buffer ? buffer.toString('utf8') : '')]);
        res.locals.form = true;
      } else if (type === 'multipart/form-data') {
        req.body = buffer && buffer.length > 0 ? decodeFormPairs(await parseMultipart(req, buffer)) : {};
        res.locals.form = true;
      } else if (buffer && buffer.length > 0) {
        throw Errors.unsupportedMediaType();
      } else {
        req.body = {};
        res.locals.form = true;
      }
      next();
    } catch (err) {
      next(err);
    }
  };
  return [raw, decode];
}
