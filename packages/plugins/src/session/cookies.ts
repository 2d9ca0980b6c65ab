import type { SessionConfig } from './schema';

/** The value of cookie `name` in a request's Cookie header(s), or undefined. */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const lines = Array.isArray(header) ? header : [header];
  for (const line of lines) {
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
    }
  }
  return undefined;
}

/**
 * A Set-Cookie line with the configured attributes, in lua-resty-session's order (`Path`, `Domain`, `SameSite`,
 * `Secure`, `HttpOnly`, then `Expires` and `Max-Age`). `expiresAt` (epoch seconds) makes a persistent cookie; null a
 * browser-session one; 0 removes the cookie.
 */
export function setCookieLine(config: SessionConfig, name: string, value: string, expiresAt: number | null, now = Math.floor(Date.now() / 1000)): string {
  let line = `${name}=${value}; Path=${config.cookie_path}`;
  if (config.cookie_domain !== null) line += `; Domain=${config.cookie_domain}`;
  if (config.cookie_same_site !== 'Default') line += `; SameSite=${config.cookie_same_site}`;
  if (config.cookie_secure) line += '; Secure';
  if (config.cookie_http_only) line += '; HttpOnly';
  if (expiresAt === 0) line += `; Expires=${new Date(0).toUTCString()}; Max-Age=0`;
  else if (expiresAt !== null) line += `; Expires=${new Date(expiresAt * 1000).toUTCString()}; Max-Age=${Math.max(0, expiresAt - now)}`;
  return line;
}
