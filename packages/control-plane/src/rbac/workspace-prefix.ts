import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from '@gatehouse/core';
import { DEFAULT_WORKSPACE } from './decide';
import { entityTypeOf } from './entity-locator';
import { setWorkspace, workspaceOf } from './request-scope';
import { RESERVED_WORKSPACE_NAMES, type RbacService } from './service';
import type { WorkspaceRow } from './store';

export interface WorkspacePrefixOptions {
  /** whether a first path segment is an admin collection (`services`, `rbac`, …) rather than a workspace */
  isAdminRoot?: (segment: string) => boolean;
  log?: (message: string, err?: unknown) => void;
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/**
 * Kong's `/{workspace}/…` prefix on admin paths (kong-reference Part B §4): `/ws1/services` is `/services` in
 * workspace ws1. The prefix is recognised when the first segment is not an admin collection and the second is;
 * it is stripped from `req.url` (routes see the plain path) and the workspace is kept for the request. An unknown
 * workspace is 404 `Workspace '<x>' not found`, before authentication. Without a prefix the workspace is `default`.
 *
 * Entities created (201 with an `id`) under a workspace other than `default` are recorded as living there, so an
 * entity permission on that workspace's id covers them.
 */
export function workspacePrefix(svc: RbacService, options: WorkspacePrefixOptions = {}): RequestHandler {
  const isAdminRoot = options.isAdminRoot ?? ((s: string) => RESERVED_WORKSPACE_NAMES.has(s));
  const log = options.log ?? ((message: string, err?: unknown) => console.error(`[gatehouse rbac] ${message}`, err ?? ''));
  let defaultWs: WorkspaceRow | null = null;

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const [pathname, query] = splitUrl(req.url);
      const segments = pathname.split('/');
      // segments[0] is '' (the path starts with '/')
      const first = segments[1] ?? '';
      const second = segments[2] ?? '';
      let ws: WorkspaceRow | null = null;
      if (first !== '' && !isAdminRoot(first) && isAdminRoot(second)) {
        let name = first;
        try {
          name = decodeURIComponent(first);
        } catch {
          throw new HttpError(400, `invalid workspace name '${first}'`);
        }
        ws = await svc.findWorkspace(name);
        if (!ws) throw new HttpError(404, `Workspace '${name}' not found`);
        req.url = `/${segments.slice(2).join('/')}${query}`;
      } else {
        defaultWs ??= await svc.defaultWorkspace();
        ws = defaultWs;
      }
      setWorkspace(res, ws);
      if (ws.name !== DEFAULT_WORKSPACE && req.method !== 'GET' && req.method !== 'HEAD') recordCreations(req, res, svc, log);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** RBAC roles carry their workspace themselves, users and admins are global, workspaces are not in one. */
function recordsWorkspace(path: string): boolean {
  return !/^\/(rbac|admins|workspaces)(\/|$)/.test(path);
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}

function recordCreations(req: Request, res: Response, svc: RbacService, log: (m: string, e?: unknown) => void): void {
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    const id = (body as { id?: unknown } | null)?.id;
    const ws = workspaceOf(res);
    if (res.statusCode !== 201 || typeof id !== 'string' || !isUuid(id) || !ws || !recordsWorkspace(req.path)) return send(body);
    svc
      .recordEntityWorkspace(id, entityTypeOf(req), ws.id)
      .catch((err) => log(`could not record workspace ${ws.name} of entity ${id}`, err))
      .finally(() => send(body));
    return res;
  };
}
