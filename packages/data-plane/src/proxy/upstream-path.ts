/**
 * The path sent upstream (kong-reference 5.3, Kong's `path_handling`), as Kong 3.9 builds it.
 * The remainder is what follows the part `strip_path` removes (the matched prefix, or the text a regex path matched;
 * `/` when the route has no paths, or when it keeps its path). A leading `.` or `..` segment of the remainder is
 * dropped (`/route../req` with route `/route` → remainder `req`), so stripping never hands an upstream a dot segment.
 * v0 (default): the remainder is joined to the service path with one `/` between them, and a trailing `/` of the
 *   request is kept when the remainder is empty: service `/srv/`, route `/rou`: `/rou` → `/srv`, `/rou/` → `/srv/`;
 *   service `/s`: `/foo/bar` → `/s/bar`, `/foo` → `/s`, `/foo/` → `/s/`. Without strip_path: service path + request path.
 * v1: the remainder is appended as it is, no `/` added: service `/s`, route `/foo`: `/foobar` → `/sbar`.
 */
export function upstreamPath(basePath: string, requestPath: string, matched: string, stripPath: boolean, handling: 'v0' | 'v1'): string {
  const prefixLength = stripPath && matched.length > 0 ? matched.length : 1;
  const remainder = withoutLeadingDotSegment(requestPath.slice(prefixLength));
  return handling === 'v0' ? joinV0(basePath, remainder, requestPath, stripPath) : joinV1(basePath, remainder, requestPath, stripPath);
}

const SLASH = 47;
const DOT = 46;

/** Kong's `get_upstream_uri_v0`. */
function joinV0(base: string, remainder: string, requestPath: string, stripPath: boolean): string {
  if (base.charCodeAt(base.length - 1) === SLASH) {
    if (!stripPath) return base + requestPath.slice(1);
    if (remainder === '') {
      if (base === '/' || requestPath.charCodeAt(requestPath.length - 1) === SLASH) return base;
      return base.slice(0, -1);
    }
    return remainder.charCodeAt(0) === SLASH ? base.slice(0, -1) + remainder : base + remainder;
  }
  if (!stripPath) return requestPath === '/' ? base : base + requestPath;
  if (remainder === '') return requestPath.length > 1 && requestPath.charCodeAt(requestPath.length - 1) === SLASH ? `${base}/` : base;
  return remainder.charCodeAt(0) === SLASH ? base + remainder : `${base}/${remainder}`;
}

/** Kong's `path_handling: v1` (its traditional router). */
function joinV1(base: string, remainder: string, requestPath: string, stripPath: boolean): string {
  if (!stripPath) return base + requestPath.slice(1);
  if (base.charCodeAt(base.length - 1) === SLASH && remainder.charCodeAt(0) === SLASH) return base.slice(0, -1) + remainder;
  return base + remainder;
}

/**
 * Kong's `sanitize_uri_postfix`: `.`, `..`, or a leading `./` or `../` is dropped. Beyond Kong, so is a leading `.` or
 * `..` that an upstream would read as a dot segment: followed by an encoded separator (`%2F`, `%5C`), a back-slash,
 * or `;` parameters (`..;x/req` → `req`). The request path is normalised before routing, so only the segment the match
 * cut through can start with dots.
 */
export function withoutLeadingDotSegment(remainder: string): string {
  if (remainder.charCodeAt(0) !== DOT) return remainder;
  const dots = remainder.charCodeAt(1) === DOT ? 2 : 1;
  if (remainder.length === dots) return '';
  const next = remainder.charCodeAt(dots);
  if (next === SLASH) return remainder.slice(dots + 1);
  const hidden = HIDDEN_SEPARATOR.exec(remainder.slice(dots));
  return hidden === null ? remainder : remainder.slice(dots + hidden[0].length);
}

/** what may follow a leading `.`/`..` and still make it a dot segment for some upstream */
const HIDDEN_SEPARATOR = /^(?:%2f|%5c|\\|;[^/]*(?:\/|$))/i;
