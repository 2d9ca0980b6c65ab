import type { Route } from '@gatehouse/core';

/**
 * The request path with the route's matched prefix taken off when the route strips it (Kong's `upstream_uri` for a
 * service without a path): the longest plain prefix of `route.paths` the path starts with.
 */
export function strippedPath(route: Route | null, path: string): string {
  if (route === null || route.strip_path === false) return path;
  let longest = '';
  for (const prefix of route.paths ?? []) {
    if (prefix.startsWith('~') || !path.startsWith(prefix) || prefix.length <= longest.length) continue;
    longest = prefix;
  }
  if (longest === '') return path;
  const rest = path.slice(longest.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
