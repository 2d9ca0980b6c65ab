import { isIP } from 'node:net';

/**
 * Kong's `wildcard_host` typedef for SNI names: at most one `*`, as the leftmost or rightmost character; no IP
 * address, no port. Returns null for a valid name, else Kong's message.
 */
export function sniNameProblem(name: string): string | null {
  let host = name;
  const star = host.indexOf('*');
  if (star >= 0) {
    if (star !== 0 && star !== host.length - 1) return 'wildcard must be leftmost or rightmost character';
    if (host.indexOf('*', star + 1) >= 0) return 'only one wildcard must be specified';
    host = host.replace('*', 'wildcard');
  }
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) return 'must not be an IP';
  const withPort = /^(.*):(\d*)$/.exec(host);
  if (withPort && isIP(withPort[1]!.replace(/^\[|\]$/g, '')) === 0 && !withPort[1]!.includes(':')) {
    return /^\d+$/.test(withPort[2]!) ? 'must not have a port' : `invalid value: ${host}`;
  }
  if (/^\d+(\.\d+){3}$/.test(host.replace(/:\d+$/, ''))) return 'must not be an IP';
  if (!/^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*$/.test(host)) return `invalid value: ${host}`;
  return null;
}
