/**
 * The admin routes of RBAC, workspaces and admins, at Kong's paths (kong-reference Part B §1.2, §4). Handlers only
 * translate HTTP to RbacService calls; statuses: 201 create, 200 read/update, 204 delete, PUT 201/200.
 */
import type { Request, Response } from 'express';
import { Errors } from '@gatehouse/core';
import type { AdminContext } from '../http/context';
import type { Handlers } from '../http/resources';
import { encodeOffset, nextLink, parseListQuery } from '../service/paging';
import { DEFAULT_WORKSPACE } from './decide';
import { scopeOf } from './request-scope';
import type { RbacService } from './service';
import type { KeyPage } from './store';

const body = (req: Request): Record<string, unknown> =>
  req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};

/** DELETE …/roles takes `roles` from the body, or from the query string when a client cannot send a body. */
const rolesBody = (req: Request): Record<string, unknown> => {
  const b = body(req);
  return b.roles !== undefined ? b : { roles: req.query.roles };
};

const param = (req: Request, name: string): string => {
  const value = req.params[name];
  return Array.isArray(value) ? value.join('/') : String(value ?? '');
};

/** The path without query string, as the client sent it (workspace prefix included), for `next` links. */
const requestPath = (req: Request): string => req.originalUrl.split('?')[0]!;

async function listed<T>(req: Request, res: Response, load: (size: number, after?: string) => Promise<KeyPage<T>>): Promise<void> {
  const q = parseListQuery(req.query as Record<string, unknown>);
  const after = q.after?.[0] as string | undefined;
  if (after !== undefined && !/^[0-9a-f-]{36}$/i.test(after)) throw Errors.invalidOffset(String(req.query.offset));
  const page = await load(q.size, after);
  const offset = page.next === null ? null : encodeOffset([page.next]);
  res.status(200).json(offset === null ? { data: page.items, next: null } : { data: page.items, offset, next: nextLink(requestPath(req), offset, q) });
}

/** Adds the RBAC, workspace and admin endpoints to the admin API (other methods on these paths answer 405). */
export function mountRbacRoutes(ctx: AdminContext, svc: RbacService): void {
  const add = (path: string, handlers: Handlers) => ctx.resources.add(path, handlers);

  // ── users ─────────────────────────────────────────────────────────────────
  add('/rbac/users', {
    get: (req, res) => listed(req, res, (size, after) => svc.listUsers(size, after)),
    post: async (req, res) => {
      res.status(201).json(await svc.createUser(scopeOf(res), body(req)));
    },
  });
  add('/rbac/users/:user', {
    get: async (req, res) => {
      res.json(await svc.getUser(param(req, 'user')));
    },
    patch: async (req, res) => {
      res.json(await svc.patchUser(param(req, 'user'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteUser(scopeOf(res), param(req, 'user'));
      res.status(204).end();
    },
  });
  add('/rbac/users/:user/roles', {
    get: async (req, res) => {
      res.json(await svc.getUserRoles(param(req, 'user')));
    },
    post: async (req, res) => {
      res.status(201).json(await svc.addUserRoles(scopeOf(res), param(req, 'user'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteUserRoles(scopeOf(res), param(req, 'user'), rolesBody(req));
      res.status(204).end();
    },
  });
  add('/rbac/users/:user/permissions', {
    get: async (req, res) => {
      res.json(await svc.getUserPermissions(param(req, 'user')));
    },
  });

  // ── roles ─────────────────────────────────────────────────────────────────
  add('/rbac/roles', {
    get: (req, res) => listed(req, res, (size, after) => svc.listRoles(scopeOf(res), size, after)),
    post: async (req, res) => {
      res.status(201).json(await svc.createRole(scopeOf(res), body(req)));
    },
    put: async (req, res) => {
      const { created, role } = await svc.putRole(scopeOf(res), null, body(req));
      res.status(created ? 201 : 200).json(role);
    },
  });
  add('/rbac/roles/:role', {
    get: async (req, res) => {
      res.json(await svc.getRole(scopeOf(res), param(req, 'role')));
    },
    put: async (req, res) => {
      const { created, role } = await svc.putRole(scopeOf(res), param(req, 'role'), body(req));
      res.status(created ? 201 : 200).json(role);
    },
    patch: async (req, res) => {
      res.json(await svc.patchRole(scopeOf(res), param(req, 'role'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteRole(scopeOf(res), param(req, 'role'));
      res.status(204).end();
    },
  });
  add('/rbac/roles/:role/permissions', {
    get: async (req, res) => {
      res.json(await svc.getRolePermissions(scopeOf(res), param(req, 'role')));
    },
  });

  // ── role endpoint permissions ─────────────────────────────────────────────
  add('/rbac/roles/:role/endpoints/permissions', {
    get: async (req, res) => {
      res.json(await svc.getRoleEndpointPermissions(scopeOf(res), param(req, 'role')));
    },
  });
  add('/rbac/roles/:role/endpoints', {
    get: async (req, res) => {
      res.json({ data: await svc.listEndpoints(scopeOf(res), param(req, 'role')) });
    },
    post: async (req, res) => {
      res.status(201).json(await svc.addEndpoint(scopeOf(res), param(req, 'role'), body(req)));
    },
  });
  // the endpoint follows the workspace with its own slashes and literal `*`; none at all is the endpoint `/`
  const endpointOf = (req: Request) => `/${param(req, 'endpoint')}`;
  const onePermission: Handlers = {
    get: async (req, res) => {
      res.json(await svc.getEndpoint(scopeOf(res), param(req, 'role'), param(req, 'workspace'), endpointOf(req)));
    },
    patch: async (req, res) => {
      res.json(await svc.patchEndpoint(scopeOf(res), param(req, 'role'), param(req, 'workspace'), endpointOf(req), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteEndpoint(scopeOf(res), param(req, 'role'), param(req, 'workspace'), endpointOf(req));
      res.status(204).end();
    },
  };
  add('/rbac/roles/:role/endpoints/:workspace', onePermission);
  add('/rbac/roles/:role/endpoints/:workspace/*endpoint', onePermission);

  // ── role entity permissions ───────────────────────────────────────────────
  add('/rbac/roles/:role/entities/permissions', {
    get: async (req, res) => {
      res.json(await svc.getRoleEntityPermissions(scopeOf(res), param(req, 'role')));
    },
  });
  add('/rbac/roles/:role/entities', {
    get: async (req, res) => {
      res.json({ data: await svc.listEntities(scopeOf(res), param(req, 'role')), next: null });
    },
    post: async (req, res) => {
      res.status(201).json(await svc.addEntity(scopeOf(res), param(req, 'role'), body(req)));
    },
  });
  add('/rbac/roles/:role/entities/:entity', {
    get: async (req, res) => {
      res.json(await svc.getEntity(scopeOf(res), param(req, 'role'), param(req, 'entity')));
    },
    patch: async (req, res) => {
      res.json(await svc.patchEntity(scopeOf(res), param(req, 'role'), param(req, 'entity'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteEntity(scopeOf(res), param(req, 'role'), param(req, 'entity'));
      res.status(204).end();
    },
  });

  // ── workspaces (without a prefix, or under /default; Kong answers 404 under any other workspace) ─────────────
  const inDefault = (res: Response) => {
    if (scopeOf(res).workspace.name !== DEFAULT_WORKSPACE) throw Errors.notFound();
  };
  add('/workspaces', {
    get: (req, res) => {
      inDefault(res);
      return listed(req, res, (size, after) => svc.listWorkspaces(scopeOf(res), size, after));
    },
    post: async (req, res) => {
      inDefault(res);
      res.status(201).json(await svc.createWorkspace(body(req)));
    },
  });
  add('/workspaces/:workspace', {
    get: async (req, res) => {
      inDefault(res);
      res.json(await svc.getWorkspace(param(req, 'workspace')));
    },
    patch: async (req, res) => {
      inDefault(res);
      res.json(await svc.patchWorkspace(param(req, 'workspace'), body(req)));
    },
    put: async (req, res) => {
      inDefault(res);
      const { created, workspace } = await svc.putWorkspace(param(req, 'workspace'), body(req));
      res.status(created ? 201 : 200).json(workspace);
    },
    delete: async (req, res) => {
      inDefault(res);
      await svc.deleteWorkspace(param(req, 'workspace'));
      res.status(204).end();
    },
  });

  // ── admins ────────────────────────────────────────────────────────────────
  add('/admins', {
    get: (req, res) => listed(req, res, (size, after) => svc.listAdmins(size, after)),
    post: async (req, res) => {
      res.status(201).json(await svc.createAdmin(scopeOf(res), body(req)));
    },
  });
  add('/admins/:admin', {
    get: async (req, res) => {
      res.json(await svc.getAdmin(param(req, 'admin')));
    },
    patch: async (req, res) => {
      res.json(await svc.patchAdmin(param(req, 'admin'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteAdmin(scopeOf(res), param(req, 'admin'));
      res.status(204).end();
    },
  });
  add('/admins/:admin/roles', {
    get: async (req, res) => {
      res.json(await svc.getAdminRoles(param(req, 'admin')));
    },
    post: async (req, res) => {
      res.status(201).json(await svc.addAdminRoles(scopeOf(res), param(req, 'admin'), body(req)));
    },
    delete: async (req, res) => {
      await svc.deleteAdminRoles(scopeOf(res), param(req, 'admin'), rolesBody(req));
      res.status(204).end();
    },
  });
}
