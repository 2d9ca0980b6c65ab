import type { PluginRequest } from '../contract';
import { firstHeaderValue } from '../shared/first-header';

/** Marks a request carrying more than one distinct token. */
export const MULTIPLE_TOKENS = Symbol('multiple tokens');

const BEARER = /\s*[Bb]earer\s+(.+)/;

/** The first cookie called `name` (cookie names compared without case, as nginx does). */
function cookieValue(req: PluginRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  const lower = name.toLowerCase();
  for (const line of Array.isArray(header) ? header : [header]) {
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      if (pair.slice(0, eq).trim().toLowerCase() === lower) return pair.slice(eq + 1).trim();
    }
  }
  return undefined;
}

/**
 * Every distinct token of the request, in Kong's order: the query arguments, the cookies, then the headers
 * (`Bearer <token>`). Empty values do not count. One token → that token; none → null; several → MULTIPLE_TOKENS.
 */
export function retrieveToken(
  req: PluginRequest,
  uriParamNames: readonly string[],
  cookieNames: readonly string[],
  headerNames: readonly string[],
): string | null | typeof MULTIPLE_TOKENS {
  let found: string | null = null;
  const add = (token: string | undefined): boolean => {
    if (token === undefined || token === '' || token === found) return false;
    if (found !== null) return true;
    found = token;
    return false;
  };
  for (const name of uriParamNames) {
    for (const value of req.query.getAll(name)) if (add(value)) return MULTIPLE_TOKENS;
  }
  for (const name of cookieNames) if (add(cookieValue(req, name))) return MULTIPLE_TOKENS;
  for (const name of headerNames) {
    const header = firstHeaderValue(req, name);
    if (header === undefined) continue;
    if (add(BEARER.exec(header)?.[1])) return MULTIPLE_TOKENS;
  }
  return found;
}

export interface DecodedToken {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** base64 or base64url, padding optional (Kong's decoder); null when not base64 at all. */
export function decodeBase64Loose(input: string): Buffer | null {
  if (!BASE64.test(input)) return null;
  const unpadded = input.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  return Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function parseJsonSegment(segment: string | undefined): unknown {
  if (segment === undefined) throw new Error('missing segment');
  const bytes = decodeBase64Loose(segment);
  if (bytes === null) throw new Error('not base64');
  return JSON.parse(bytes.toString('utf8'));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Splits and decodes a token the way Kong's parser does, with its error words ("invalid JSON", "invalid typ",
 * "invalid alg", "invalid claims", "invalid signature"), which the handler prefixes with "Bad token; ".
 * `supported` is the set of algorithm names a token may announce. The signature itself is checked later.
 */
export function decodeToken(token: string, supported: ReadonlySet<string>): DecodedToken | string {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  const parts = second < 0 ? [] : [token.slice(0, first), token.slice(first + 1, second), token.slice(second + 1)];
  let header: unknown;
  let claims: unknown;
  try {
    header = parseJsonSegment(parts[0]);
    claims = parseJsonSegment(parts[1]);
  } catch {
    return 'invalid JSON';
  }
  if (!isRecord(header)) return 'invalid JSON';
  if (header.typ !== undefined && header.typ !== null && (typeof header.typ !== 'string' || header.typ.toUpperCase() !== 'JWT')) {
    return 'invalid typ';
  }
  if (typeof header.alg !== 'string' || !supported.has(header.alg)) return 'invalid alg';
  if (!isRecord(claims)) return 'invalid claims';
  if (decodeBase64Loose(parts[2]!) === null) return 'invalid signature';
  return { header, claims };
}
