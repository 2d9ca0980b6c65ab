import type { RequestHandler } from 'express';
import type { ResourceRegistry } from './resources';

/**
 * CORS for browser clients (Kong Manager and other UIs): the Origin is echoed with credentials allowed, and every
 * preflight is answered here with 204 before authentication, since browsers send preflights without credentials.
 */
export function cors(resources: ResourceRegistry): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.vary('Origin');
    } else {
      res.setHeader('Access-Control-Allow-Origin', '*');
    }
    if (req.method !== 'OPTIONS') return next();
    const allow = resources.methodsFor(req.path) ?? ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];
    const methods = [...allow, 'OPTIONS'].join(', ');
    res.setHeader('Allow', methods);
    res.setHeader('Access-Control-Allow-Methods', methods);
    const requested = req.headers['access-control-request-headers'];
    res.setHeader('Access-Control-Allow-Headers', requested ? String(requested) : 'Content-Type, Kong-Admin-Token');
    res.setHeader('Access-Control-Max-Age', '3600');
    res.status(204).end();
  };
}
