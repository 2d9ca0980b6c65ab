/**
 * The admin routes of RBAC, workspaces and admins, at Kong's paths (kong-reference Part B §1.2, §4). Users, roles,
 * workspaces and admins are entity families served by the generic routes (routes/entity-routes.ts) with the hooks
 * of rbac/kinds.ts; only the role grants and the permission sub-routes are written here.
 */
import type { Request, Response } from 'express';
import { Errors, schemaViolation } from '@gatehouse/core';
import { writeInput, type AdminContext } from '../http/context';
import type { Handlers } from '../http/resources';
import { DEFAULT_WORKSPACE, WILDCARD } from './decide';
import { adminKind, roleKind, userKind, workspaceKind } from './kinds';
import { scopeOf, scopeOfLocals } from './request-scope';
import { RolePermissions } from './role-permissions';
import type { RbacService } from './service';

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

/** the first segments of every registered admin path: names a workspace may not take */
function adminRoots(ctx: AdminContext): Set<string> {
  return new Set(ctx.resources.routes().map((r) => r.path.split('/')[1] ?? '').filter((s) => s !== '' && !s.startsWith(':')));
}

/** Adds the RBAC, workspace and admin endpoints to the admin API (other methods on these paths answer 405). */
export function mountRbacRoutes(ctx: AdminContext, svc: RbacService): void {
  let roots: Set<string> | null = null;
  const isAdminRoot = (segment: string) => (roots ??= adminRoots(ctx)).has(segment);
  svc.setAdminRoots(isAdminRoot);

  mountFamilies(ctx, svc, isAdminRoot);
  const permissions = new RolePermissions(svc);
  const add = (path: string, handlers: Handlers) => ctx.resources.add(path, handlers);
  mountRoleGrants(add, permissions);
  mountPermissionRoutes(add, permissions);
}

type Add = (path: string, handlers: Handlers) => void;

/** Users, roles, workspaces and admins: entity families on the admin API's EntityService, with the generic routes. */
function mountFamilies(ctx: AdminContext, svc: RbacService, isAdminRoot: (segment: string) => boolean): void {
  const add: Add = (path, handlers) => ctx.resources.add(path, handlers);
  // RBAC's families go through the admin API's one EntityService; they are no part of the configuration (their
  // kinds say so: no config version, no snapshot, no declarative document)
  const { entities } = ctx;
  const deps = { users: svc.users, roles: svc.roles, isAdminRoot, configTables: () => svc.configTables() };
  const workspaces = entities.register(workspaceKind(deps));
  const users = entities.register(userKind(deps));
  const roles = entities.register(roleKind());
  const admins = entities.register(adminKind(deps));
  svc.mount({ entities, users, roles, admins, workspaces });

  // what a create records in its transaction: the entity's workspace and its creator's ownership
  entities.onCreated((trx, kind, entity, input) => svc.recordCreation(trx, kind.def.name, entity.id, scopeOfLocals(input.locals)));

  const inRequestWorkspace = (res: Response) => ({ field: 'workspace', id: scopeOf(res).workspace.id });
  // workspaces are served without a prefix, or under /default; Kong answers 404 under any other workspace
  const inDefault = (res: Response) => {
    if (scopeOf(res).workspace.name !== DEFAULT_WORKSPACE) throw Errors.notFound();
  };
  /** workspaces the caller may see: all without a caller or with any rule on workspace `*` (Kong 2024) */
  const listedWorkspace = (res: Response, ws: Record<string, unknown>) => {
    const rules = scopeOf(res).caller?.endpointRules;
    return !rules || rules.has(WILDCARD) || rules.has(String(ws.name)) || rules.has(String(ws.id));
  };

  // PUT /rbac/roles names the role in its body: `id`, else `name`
  add('/rbac/roles', {
    put: async (req, res) => {
      const b = body(req);
      const key = typeof b.id === 'string' && b.id !== '' ? b.id : b.name;
      if (typeof key !== 'string' || key === '') throw schemaViolation({ name: 'required field missing' });
      const { entity, created } = await entities.upsertReporting(roles, key, writeInput(req, res), inRequestWorkspace(res));
      res.status(created ? 201 : 200).json(entity);
    },
  });
  const served = { nested: false, catalogued: true };
  ctx.mountEntity(users, { ...served, refParam: 'user' });
  ctx.mountEntity(roles, { ...served, refParam: 'role', scope: inRequestWorkspace, putCreatedIs201: true });
  ctx.mountEntity(workspaces, { ...served, refParam: 'workspace', guard: inDefault, listed: listedWorkspace, putCreatedIs201: true });
  ctx.mountEntity(admins, { ...served, refParam: 'admin' });
}

/** The roles a user or an admin holds. */
function mountRoleGrants(add: Add, permissions: RolePermissions): void {
  // ── role grants ───────────────────────────────────────────────────────────
  for (const [holder, path] of [['user', '/rbac/users/:user/roles'], ['admin', '/admins/:admin/roles']] as const) {
    add(path, {
      get: async (req, res) => {
        const ref = param(req, holder);
        res.json(holder === 'user' ? await permissions.getUserRoles(scopeOf(res), ref) : await permissions.getAdminRoles(scopeOf(res), ref));
      },
      post: async (req, res) => {
        res.status(201).json(await permissions.addRoles(scopeOf(res), holder, param(req, holder), body(req)));
      },
      delete: async (req, res) => {
        await permissions.removeRoles(scopeOf(res), holder, param(req, holder), rolesBody(req));
        res.status(204).end();
      },
    });
  }
  add('/rbac/users/:user/permissions', {
    get: async (req, res) => {
      res.json(await permissions.getUserPermissions(scopeOf(res), param(req, 'user')));
    },
  });
  add('/rbac/roles/:role/permissions', {
    get: async (req, res) => {
      res.json(await permissions.getRolePermissions(scopeOf(res), param(req, 'role')));
    },
  });
}

/** A role's endpoint and entity permissions. */
function mountPermissionRoutes(add: Add, permissions: RolePermissions): void {
  // ── role endpoint and entity permissions ──────────────────────────────────
  for (const family of ['endpoints', 'entities'] as const) {
    add(`/rbac/roles/:role/${family}/permissions`, {
      get: async (req, res) => {
        res.json((await permissions.getRolePermissions(scopeOf(res), param(req, 'role'), family))[family]);
      },
    });
    add(`/rbac/roles/:role/${family}`, {
      get: async (req, res) => {
        const data = await permissions.listPermissions(scopeOf(res), family, param(req, 'role'));
        res.json(family === 'entities' ? { data, next: null } : { data });
      },
      post: async (req, res) => {
        const role = param(req, 'role');
        res.status(201).json(family === 'endpoints' ? await permissions.addEndpoint(scopeOf(res), role, body(req)) : await permissions.addEntity(scopeOf(res), role, body(req)));
      },
    });
  }
  // the endpoint follows the workspace with its own slashes and literal `*`; none at all is the endpoint `/`
  const onePermission = (family: 'endpoints' | 'entities', keyOf: (req: Request) => string[]): Handlers => ({
    get: async (req, res) => {
      res.json(await permissions.getPermission(scopeOf(res), family, param(req, 'role'), keyOf(req)));
    },
    patch: async (req, res) => {
      res.json(await permissions.patchPermission(scopeOf(res), family, param(req, 'role'), keyOf(req), body(req)));
    },
    delete: async (req, res) => {
      await permissions.deletePermission(scopeOf(res), family, param(req, 'role'), keyOf(req));
      res.status(204).end();
    },
  });
  const endpointKey = (req: Request) => [param(req, 'workspace'), req.params.endpoint === undefined ? '/' : `/${param(req, 'endpoint')}`];
  add('/rbac/roles/:role/endpoints/:workspace', onePermission('endpoints', endpointKey));
  add('/rbac/roles/:role/endpoints/:workspace/*endpoint', onePermission('endpoints', endpointKey));
  add('/rbac/roles/:role/entities/:entity', onePermission('entities', (req) => [param(req, 'entity')]));
}
