/**
 * Path normalisation (kong-reference decision 12): the one function that turns a request path into the path routes
 * match, plugins see and the upstream receives.
 *   1. percent-encoded unreserved characters (`A–Z a–z 0–9 - . _ ~`) are decoded (`%70` → `p`, `%2e` → `.`); every
 *      other escape is kept as sent, so `%2F` and `%5C` never become separators;
 *   2. runs of `/` are merged;
 *   3. dot segments are removed as RFC 3986 §5.2.4 says (`/a/./b/../c` → `/a/c`, `/a/b/..` → `/a/`).
 * A path the gateway must not forward answers null (the caller answers 400):
 *   - one whose `..` would climb above `/` (RFC 3986 drops those; we refuse them);
 *   - one with a dot segment hidden behind an encoded or back-slash separator or a `;` parameter (`/a/..%2Fb`,
 *     `/a/..%5Cb`, `/a/..\b`, `/a/..;/b`):
 *     an upstream that decodes `%2F` or treats `\` as `/` would resolve it to a resource the route does not cover.
 * The common path (no `%`, no `//`, no `.` segment, no `\`) is returned as it is without allocating.
 */
export function normalizePath(raw: string): string | null {
  return needsWork(raw) ? normalizeFully(raw) : raw;
}

/** The whole normalisation, for a path the fast check found work in (exported so tests can hold the two together). */
export function normalizeFully(raw: string): string | null {
  const decoded = decodeUnreserved(raw);
  const segments = decoded.split('/');
  const out: string[] = [];
  // segments[0] is what precedes the first '/' ('' for an origin-form path)
  const lead = segments[0]!;
  const last = segments.length - 1;
  let trailingSlash = false;
  for (let i = 1; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === '') {
      // merged run of '/', or the path's trailing '/'
      if (i === last) trailingSlash = true;
      continue;
    }
    if (segment === '.') {
      if (i === last) trailingSlash = true;
      continue;
    }
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
      if (i === last) trailingSlash = true;
      continue;
    }
    if (hidesDotSegment(segment)) return null;
    out.push(segment);
    trailingSlash = false;
  }
  if (out.length === 0) return `${lead}/`;
  return `${lead}/${out.join('/')}${trailingSlash ? '/' : ''}`;
}

/** Anything the fast path cannot pass as it is: an escape, `//`, a `.` or `..` segment (`;` parameters too), a `\`. */
export function needsWork(path: string): boolean {
  const length = path.length;
  let previous = 47; // as if preceded by '/', for a dot segment at the start; not for '//' (a path's own first '/')
  for (let i = 0; i < length; i++) {
    const c = path.charCodeAt(i);
    if (c === 37 /* % */ || c === 92 /* \ */) return true;
    if (previous === 47) {
      if (c === 47 && i > 0) return true; // '//'
      if (c === 46 /* . */) {
        let j = i + 1;
        if (j < length && path.charCodeAt(j) === 46) j++;
        const after = j < length ? path.charCodeAt(j) : 47;
        if (after === 47 || after === 59 /* ; */) return true;
      }
    }
    previous = c;
  }
  return false;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function isUnreserved(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126;
}

/** Decodes `%XX` escapes of unreserved characters only; anything else (malformed escapes included) is kept. */
function decodeUnreserved(path: string): string {
  let i = path.indexOf('%');
  if (i < 0) return path;
  let out = '';
  let from = 0;
  while (i >= 0 && i + 2 < path.length) {
    const hi = hexValue(path.charCodeAt(i + 1));
    const lo = hexValue(path.charCodeAt(i + 2));
    const c = hi * 16 + lo;
    if (hi >= 0 && lo >= 0 && isUnreserved(c)) {
      out += path.slice(from, i) + String.fromCharCode(c);
      from = i + 3;
      i = path.indexOf('%', from);
    } else {
      i = path.indexOf('%', i + 1);
    }
  }
  return from === 0 ? path : out + path.slice(from);
}

const HIDDEN_SEPARATOR = /%2f|%5c|\\|;/i;
const ENCODED_SEPARATORS = /%2f|%5c|\\/i;

/**
 * A segment that an upstream decoding `%2F`/`%5C`, splitting on `\` or dropping `;` parameters (`..;`) would read as
 * `.` or `..`.
 */
function hidesDotSegment(segment: string): boolean {
  if (!HIDDEN_SEPARATOR.test(segment)) return false;
  for (const part of segment.split(ENCODED_SEPARATORS)) {
    const semicolon = part.indexOf(';');
    const name = semicolon < 0 ? part : part.slice(0, semicolon);
    if (name === '.' || name === '..') return true;
  }
  return false;
}
