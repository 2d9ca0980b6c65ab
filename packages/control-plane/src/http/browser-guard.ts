import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { normalizeOrigin } from './cors';
import { parseListen } from './server';

/** Whether an address or name only reaches this machine: 127.0.0.0/8, ::1 (also IPv4-mapped), `localhost`, `*.localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return isLoopback(h.slice(7));
  return false;
}

/** Whether every address the admin API listens on (`host:port`) is a loopback one. */
export function loopbackOnly(listen: readonly string[]): boolean {
  return listen.length > 0 && listen.every((l) => isLoopback(parseListen(l).host));
}

/** `GATEHOUSE_ADMIN_HOSTS`: comma-separated host names (a port is optional), lowercase; malformed entries are refused. */
export function parseAdminHosts(value: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (value ?? '').split(',').map((v) => v.trim()).filter(Boolean)) {
    const host = hostOf(entry);
    if (!host) throw new Error(`GATEHOUSE_ADMIN_HOSTS: '${entry}' is not a host name (host or host:port)`);
    out.push(entry.toLowerCase());
  }
  return out;
}

/** The host part of a `Host` header value (`name`, `name:port`, `[v6]:port`), lowercase; null when it is not one. */
function hostOf(value: string): string | null {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  return match ? match[1]!.toLowerCase() : null;
}

export interface BrowserGuardOptions {
  /** origins whose pages may call the admin API (GATEHOUSE_ADMIN_GUI_ORIGINS) */
  allowedOrigins: readonly string[];
  /** the admin listener is bound to a loopback address: then `Host` must name this machine or a listed host */
  loopbackListener: boolean;
  /** `Host` values accepted besides loopback names and addresses (GATEHOUSE_ADMIN_HOSTS): `name` (any port) or `name:port` */
  adminHosts?: readonly string[];
}

const REFUSED = { message: 'Cross-origin request refused' };
const MISDIRECTED = { message: 'Misdirected request' };

/**
 * Keeps browsers from driving the admin API (decision 27), before any handler and on every method. With a loopback
 * listener, a `Host` that names neither this machine nor a listed host answers 421 (a DNS-rebound page). A request
 * whose `Origin` is neither the admin API's own origin (its scheme and `Host`) nor a listed GUI origin, `null`
 * included, answers 403; so does one that says it comes from another site (`Sec-Fetch-Site: cross-site` or
 * `same-site`) without an allowed `Origin`, such as a form or an image elsewhere. Requests without either header
 * (scripts, decK, curl) pass untouched.
 */
export function browserGuard(options: BrowserGuardOptions): RequestHandler {
  const allowed = new Set(options.allowedOrigins.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== null));
  const hosts = new Set((options.adminHosts ?? []).map((h) => h.toLowerCase()));
  const hostAccepted = (value: string): boolean => {
    const host = hostOf(value);
    if (host === null) return false;
    return isLoopback(host) || hosts.has(host) || hosts.has(value.trim().toLowerCase());
  };
  const originAllowed = (req: Request, origin: string): boolean => {
    const normalized = normalizeOrigin(origin);
    if (normalized === null) return false;
    if (allowed.has(normalized)) return true;
    const host = req.headers.host;
    return host !== undefined && normalized === normalizeOrigin(`${req.protocol}://${host}`);
  };
  return (req, res, next) => {
    const host = req.headers.host;
    if (options.loopbackListener && host !== undefined && !hostAccepted(host)) {
      res.status(421).json(MISDIRECTED);
      return;
    }
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    const refused = origin !== undefined ? !originAllowed(req, origin) : site === 'cross-site' || site === 'same-site';
    if (refused) {
      res.status(403).json(REFUSED);
      return;
    }
    next();
  };
}
