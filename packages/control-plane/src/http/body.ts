import busboy from 'busboy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { decodeFormPairs, Errors, HttpError, schemaViolation, structuralViolations } from '@gatehouse/core';
import { assertFormNesting } from './nesting';
import { BODY_METHODS, isJsonType, mediaType, requestGuard, type BodyLimits } from './request-guard';

export { mediaType };

/**
 * Kong's request bodies: JSON, form-urlencoded and multipart, the two form encodings decoded with Kong's rules
 * (dotted keys, `a[]`, `a[1]`, repeated keys) into `req.body`; `res.locals.form` says the values are still strings
 * for the schema to coerce. Bodies of other types → 415; unparsable JSON → 400. The request guard (request-guard.ts)
 * has read the body first, within its size limit (413) and, for JSON, its nesting bound; form keys are held to the
 * same bound before they are decoded. Text that is not UTF-8 (raw, percent-encoded or in a multipart part), a
 * multipart part without a name → 400; then the decoded body passes the input bounds every field is held to (NUL
 * bytes, prototype-pollution keys, nesting, array and string sizes: decision 16) → 400 with the field named, before
 * any route sees it.
 */
export const ADMIN_BODY_LIMIT = 4 * 1024 * 1024;
/** `POST /config` (GATEHOUSE_ADMIN_MAX_CONFIG_BODY), decision 26 */
export const ADMIN_CONFIG_BODY_LIMIT = 64 * 1024 * 1024;

const notUtf8 = () => new HttpError(400, 'Request body is not valid UTF-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw notUtf8();
  }
}

function parseJson(buffer: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decodeUtf8(buffer));
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw Errors.badJson();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw Errors.badJson();
  return value as Record<string, unknown>;
}

function parseMultipart(req: Request, buffer: Buffer): Promise<Array<[string, string]>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // values are read as latin1 (byte for byte) and decoded strictly below, so bytes that are not UTF-8 are refused
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', defCharset: 'latin1', limits: { fields: 10_000, parts: 10_000 } });
    } catch (err) {
      reject(new HttpError(400, `Cannot parse multipart body: ${(err as Error).message}`));
      return;
    }
    const pairs: Array<[string, string]> = [];
    const files: Array<Promise<void>> = [];
    let fault: HttpError | null = null;
    const named = (name: string | undefined): name is string => {
      if (typeof name === 'string' && name !== '') return true;
      fault ??= new HttpError(400, 'Cannot parse multipart body: a part has no name');
      return false;
    };
    parser.on('field', (name, value) => {
      if (!named(name)) return;
      try {
        pairs.push([name, decodeUtf8(Buffer.from(value, 'latin1'))]);
      } catch (err) {
        fault ??= err as HttpError;
      }
    });
    parser.on('file', (name, stream) => {
      // a truncated form ends an open file part with an error on its stream (the parser reports it too)
      stream.on('error', (err: Error) => {
        fault ??= new HttpError(400, `Cannot parse multipart body: ${err.message}`);
      });
      if (!named(name)) {
        stream.resume();
        return;
      }
      // a file part is a field whose value is the file's content (certificates, keys)
      const index = pairs.push([name, '']) - 1;
      const chunks: Buffer[] = [];
      files.push(
        new Promise<void>((done) => {
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', () => done());
          stream.on('end', () => {
            try {
              pairs[index] = [name, decodeUtf8(Buffer.concat(chunks))];
            } catch (err) {
              fault ??= err as HttpError;
            }
            done();
          });
        }),
      );
    });
    parser.on('error', (err: Error) => reject(new HttpError(400, `Cannot parse multipart body: ${err.message}`)));
    parser.on('close', () =>
      Promise.all(files).then(() => (fault ? reject(fault) : resolve(pairs)), reject),
    );
    parser.end(buffer);
  });
}

/**
 * `a=1&b[]=2` → pairs, as URLSearchParams splits them (`+` is a space; a `%` not followed by two hex digits stays
 * as it is), except that the decoded bytes must be UTF-8.
 */
export function parseUrlEncoded(buffer: Buffer | undefined): Array<[string, string]> {
  if (!buffer || buffer.length === 0) return [];
  const text = decodeUtf8(buffer);
  const pairs: Array<[string, string]> = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    pairs.push([percentDecode(key), percentDecode(value)]);
  }
  return pairs;
}

function percentDecode(text: string): string {
  const plain = text.replace(/\+/g, ' ');
  if (!plain.includes('%')) return plain;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < plain.length; i++) {
    const ch = plain[i]!;
    if (ch === '%' && /^[0-9a-fA-F]{2}$/.test(plain.slice(i + 1, i + 3))) {
      bytes.push(parseInt(plain.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const code = plain.codePointAt(i)!;
      if (code > 0xffff) i++;
      bytes.push(...encoder.encode(String.fromCodePoint(code)));
    }
  }
  return decodeUtf8(Uint8Array.from(bytes));
}

function decodeForm(pairs: Array<[string, string]>): Record<string, unknown> {
  assertFormNesting(pairs.map(([key]) => key));
  return decodeFormPairs(pairs);
}

/**
 * `passThrough` names requests whose body a route decodes itself (a whole declarative configuration may be YAML);
 * their bodies are held to `limits.largeBody` (it is larger than any entity body), everyone else's to `limits.body`.
 */
export function bodyReader(limits: BodyLimits, passThrough?: (req: Request) => boolean): RequestHandler[] {
  const decode = async (req: Request, res: Response, next: NextFunction) => {
    if (passThrough?.(req)) {
      res.locals.form = false;
      return next();
    }
    try {
      const buffer: Buffer | undefined = Buffer.isBuffer(req.body) ? req.body : undefined;
      res.locals.form = false;
      if (!BODY_METHODS.has(req.method)) {
        req.body = {};
        return next();
      }
      const type = mediaType(req);
      if (isJsonType(type)) {
        if (!buffer || buffer.length === 0) throw Errors.badJson();
        req.body = parseJson(buffer);
      } else if (type === 'application/x-www-form-urlencoded') {
        req.body = decodeForm(parseUrlEncoded(buffer));
        res.locals.form = true;
      } else if (type === 'multipart/form-data') {
        req.body = buffer && buffer.length > 0 ? decodeForm(await parseMultipart(req, buffer)) : {};
        res.locals.form = true;
      } else if (buffer && buffer.length > 0) {
        throw Errors.unsupportedMediaType();
      } else {
        req.body = {};
        res.locals.form = true;
      }
      const violations = structuralViolations(req.body);
      if (violations) throw schemaViolation(violations);
      next();
    } catch (err) {
      next(err);
    }
  };
  return [requestGuard(limits, passThrough ?? (() => false)), decode];
}
