/**
 * The path sent upstream (kong-reference 5.3, Kong's `path_handling`).
 * v0 (default): with strip_path the matched part is removed and a leading `/` restored, then the remainder is joined
 *   to the service path: service `/` or none, route `/foo`: `/foo/bar` → `/bar`, `/foo` → `/`, `/foobar` → `/bar`;
 *   service `/s`: `/foo/bar` → `/s/bar`, `/foo` → `/s`. Without strip_path: service path + full request path.
 * v1: the remainder is appended as it is, no `/` added: service `/s`, route `/foo`: `/foobar` → `/sbar`.
 */
export function upstreamPath(basePath: string, requestPath: string, matched: string, stripPath: boolean, handling: 'v0' | 'v1'): string {
  let uri = requestPath;
  if (stripPath && matched.length > 0) {
    uri = requestPath.slice(matched.length);
    if (handling === 'v0' && uri.charCodeAt(0) !== 47 /* / */) uri = `/${uri}`;
  }
  if (basePath === '/') return uri === '' ? '/' : uri.charCodeAt(0) === 47 ? uri : `/${uri}`;
  if (basePath.charCodeAt(basePath.length - 1) === 47) {
    return uri.charCodeAt(0) === 47 ? basePath.slice(0, -1) + uri : basePath + uri;
  }
  if (uri === '/' && handling === 'v0') return basePath;
  return basePath + uri;
}
