import type { IncomingMessage } from 'node:http';

/**
 * Client header hygiene (kong-reference decision 13), applied once per request before routing, so neither the
 * router, nor a plugin, nor the upstream ever sees what is removed:
 *   - header names containing `_` are dropped (nginx's and so Kong's default; a WSGI upstream would merge
 *     `x_consumer_username` with `x-consumer-username`), unless the data plane allows them;
 *   - every identity header the gateway or a plugin can set is dropped, on every route, whether or not a plugin of
 *     the route would set it: `x-consumer-*`, `x-credential-identifier`, `x-anonymous-consumer`,
 *     `x-authenticated-scope`, `x-authenticated-userid`, `x-authenticated-groups` (`x-consumer-groups` is an
 *     `x-consumer-*` header).
 */
const IDENTITY_HEADERS = new Set(['x-credential-identifier', 'x-anonymous-consumer', 'x-authenticated-scope', 'x-authenticated-userid', 'x-authenticated-groups']);
const IDENTITY_PREFIX = 'x-consumer-';

/** Whether a (lower-cased) header name is one only the gateway may set. */
export function isIdentityHeader(lowerName: string): boolean {
  return lowerName.startsWith(IDENTITY_PREFIX) || IDENTITY_HEADERS.has(lowerName);
}

function dropped(name: string, allowUnderscores: boolean): boolean {
  if (!allowUnderscores && name.indexOf('_') >= 0) return true;
  // every identity header starts with "x-" and is at least 11 characters long: most names stop at this test
  if (name.length < 11 || (name.charCodeAt(0) | 0x20) !== 120 /* x */ || name.charCodeAt(1) !== 45 /* - */) return false;
  return isIdentityHeader(name.toLowerCase());
}

/**
 * Removes the headers a client may not send from `req.rawHeaders` and `req.headers`. Costs one pass over the raw
 * header names; nothing is allocated unless a header is removed.
 */
export function scrubClientHeaders(req: IncomingMessage, allowUnderscores: boolean): void {
  const raw = req.rawHeaders;
  let first = -1;
  for (let i = 0; i < raw.length; i += 2) {
    if (dropped(raw[i]!, allowUnderscores)) {
      first = i;
      break;
    }
  }
  if (first < 0) return;
  const kept = raw.slice(0, first);
  const headers = req.headers;
  for (let i = first; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (dropped(name, allowUnderscores)) {
      delete headers[name.toLowerCase()];
      continue;
    }
    kept.push(name, raw[i + 1]!);
  }
  req.rawHeaders = kept;
}
