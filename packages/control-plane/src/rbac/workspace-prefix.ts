import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Errors, type Workspace } from '@gatehouse/core';
import { setWorkspace } from './request-scope';
import type { RbacService } from './service';

/**
 * Kong's `/{workspace}/…` prefix on admin paths (kong-reference Part B §4): `/ws1/services` is `/services` in
 * workspace ws1. The prefix is recognised when the first segment is not an admin collection (the first segment of a
 * registered admin path) and the second is; it is stripped from `req.url` (routes see the plain path) and the
 * workspace is kept for the request. An unknown workspace is 404 `Workspace '<x>' not found`, before
 * authentication. Without a prefix the workspace is `default`. What a create under a workspace records there
 * commits with the entity (RbacService.recordCreation, run in the write's transaction).
 */
export function workspacePrefix(svc: RbacService): RequestHandler {
  let defaultWs: Workspace | null = null;

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const [pathname, query] = splitUrl(req.url);
      const segments = pathname.split('/');
      // segments[0] is '' (the path starts with '/')
      const first = segments[1] ?? '';
      const second = segments[2] ?? '';
      let ws: Workspace | null;
      if (first !== '' && !svc.isAdminRoot(first) && svc.isAdminRoot(second)) {
        let name = first;
        try {
          name = decodeURIComponent(first);
        } catch {
          throw Errors.badRequest(`invalid workspace name '${first}'`);
        }
        ws = await svc.findWorkspace(name);
        if (!ws) throw Errors.notFoundNamed(`Workspace '${name}' not found`);
        req.url = `/${segments.slice(2).join('/')}${query}`;
      } else {
        defaultWs ??= await svc.defaultWorkspace();
        ws = defaultWs;
      }
      setWorkspace(res, ws);
      next();
    } catch (err) {
      next(err);
    }
  };
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}
