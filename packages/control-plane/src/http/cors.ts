import type { RequestHandler } from 'express';
import type { ResourceRegistry } from './resources';

/** An origin as browsers send it (`scheme://host[:port]`, lowercase, no path), or null when it is not one. */
export function normalizeOrigin(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'null') return null;
  try {
    const origin = new URL(trimmed).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** `GATEHOUSE_ADMIN_GUI_ORIGINS`: comma-separated origins; entries that are not origins are configuration errors. */
export function parseAdminGuiOrigins(value: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (value ?? '').split(',').map((v) => v.trim()).filter(Boolean)) {
    const origin = normalizeOrigin(entry);
    if (!origin) throw new Error(`GATEHOUSE_ADMIN_GUI_ORIGINS: '${entry}' is not an origin (scheme://host[:port])`);
    out.push(origin);
  }
  return out;
}

/**
 * CORS for browser clients (Kong Manager and other UIs), for the listed origins only (decision 14): a request whose
 * `Origin` is listed gets it echoed with credentials allowed; any other origin, `null` included, gets no
 * `Access-Control-Allow-*` header at all, so a page elsewhere can neither read answers nor pass a preflight.
 * Preflights (OPTIONS) are answered here with 204 and `Allow` before authentication, since browsers send them
 * without credentials; only listed origins get the CORS headers on them. Requests from other origins never get here:
 * `browserGuard` (decision 27) answers them 403 first.
 */
export function cors(resources: ResourceRegistry, allowedOrigins: readonly string[] = []): RequestHandler {
  const allowed = new Set(allowedOrigins.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== null));
  return (req, res, next) => {
    const header = req.headers.origin;
    const origin = typeof header === 'string' ? normalizeOrigin(header) : null;
    const listed = origin !== null && allowed.has(origin);
    if (header !== undefined) res.vary('Origin');
    if (listed) {
      res.setHeader('Access-Control-Allow-Origin', header as string);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    if (req.method !== 'OPTIONS') return next();
    const allow = resources.methodsFor(req.path) ?? ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];
    const methods = [...allow, 'OPTIONS'].join(', ');
    res.setHeader('Allow', methods);
    if (listed) {
      res.setHeader('Access-Control-Allow-Methods', methods);
      const requested = req.headers['access-control-request-headers'];
      res.setHeader('Access-Control-Allow-Headers', requested ? String(requested) : 'Content-Type, Kong-Admin-Token');
      res.setHeader('Access-Control-Max-Age', '3600');
    }
    res.status(204).end();
  };
}
