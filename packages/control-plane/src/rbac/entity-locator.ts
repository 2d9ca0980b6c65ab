import type { Request } from 'express';
import type { AdminContext } from '../http/context';
import type { EntityKind } from '../service/entity-kind';
import type { RbacAction } from './decide';
import type { RbacScope, RbacService } from './service';
import * as store from './store';

/** An entity a request touches, with the action the entity check must allow on it. */
export interface TouchedEntity {
  id: string;
  /** the workspace it lives in; null → the default workspace */
  workspaceId: string | null;
  action: RbacAction;
}

function adminContext(req: Request): AdminContext | undefined {
  return (req.app.locals as { admin?: AdminContext }).admin;
}

/**
 * The entities a request names in its path, parents first: `/services/s1/routes/r1` names s1 and r1. The last one
 * gets the request's action when the path ends at it (GET/PATCH/PUT/DELETE `/services/s1`); every other one, and
 * the parent of a nested create or listing, gets `read`. Names are resolved to ids as the routes resolve them;
 * absent entities are left out (the route answers 404, or PUT creates).
 */
export async function locateEntities(req: Request, svc: RbacService, scope: RbacScope, action: RbacAction): Promise<TouchedEntity[]> {
  const segs = req.path.split('/').filter((s) => s !== '').map(safeDecode);
  const found = await resolve(req, svc, scope, segs);
  const endsAtEntity = found.length > 0 && found[found.length - 1]!.endsAt === segs.length;
  return found.map((f, i) => ({
    id: f.id,
    workspaceId: f.workspaceId,
    action: i === found.length - 1 && endsAtEntity && action !== 'create' ? action : 'read',
  }));
}

interface Located {
  id: string;
  workspaceId: string | null;
  /** how many path segments lead to this entity */
  endsAt: number;
}

async function resolve(req: Request, svc: RbacService, scope: RbacScope, segs: string[]): Promise<Located[]> {
  const [a, b, c] = segs;
  if (a === 'rbac') {
    if (b === 'users' && c) {
      const user = await store.findUser(svc.db, c);
      return user ? [{ id: user.id, workspaceId: null, endsAt: 3 }] : [];
    }
    if (b === 'roles' && c) {
      const role = await store.findRole(svc.db, scope.workspace.id, c);
      return role ? [{ id: role.id, workspaceId: role.ws_id, endsAt: 3 }] : [];
    }
    return [];
  }
  if (a === 'workspaces' && b) {
    const ws = await store.findWorkspace(svc.db, b);
    return ws ? [{ id: ws.id, workspaceId: ws.id, endsAt: 2 }] : [];
  }
  if (a === 'admins' && b) {
    const admin = await store.findAdmin(svc.db, b);
    return admin ? [{ id: admin.id, workspaceId: null, endsAt: 2 }] : [];
  }
  return resolveConfigEntities(req, svc, segs);
}

/** `/{collection}/{ref}[/{child collection}/{ref}]` over the entity kinds the admin API serves. */
async function resolveConfigEntities(req: Request, svc: RbacService, segs: string[]): Promise<Located[]> {
  const ctx = adminContext(req);
  if (!ctx || segs.length < 2) return [];
  const kinds = ctx.entities.allKinds();
  const out: Located[] = [];
  let parent: { kind: EntityKind; id: string } | null = null;
  for (let i = 0; i + 1 < segs.length; i += 2) {
    const collection = segs[i]!;
    const ref = segs[i + 1]!;
    const kind: EntityKind | undefined = parent
      ? kinds.find((k) => k.def.foreignKeys.some((fk) => fk.entity === parent!.kind.def.name) && (k.nestedPaths?.[parent!.kind.def.name] ?? k.def.adminPath) === collection)
      : kinds.find((k) => k.def.adminPath === collection);
    if (!kind) break;
    let entity: { id: string } | null = null;
    try {
      const fk = parent ? kind.def.foreignKeys.find((f) => f.entity === parent!.kind.def.name) : undefined;
      entity = await ctx.entities.find(kind, ref, fk && parent ? { field: fk.field, id: parent.id } : undefined);
    } catch {
      // a ref the route will refuse (400) names no entity
      entity = null;
    }
    if (!entity) break;
    out.push({ id: entity.id, workspaceId: null, endsAt: i + 2 });
    parent = { kind, id: entity.id };
  }
  if (out.length === 0) return out;
  const workspaces = await svc.workspacesOf(out.map((o) => o.id));
  return out.map((o) => ({ ...o, workspaceId: workspaces.get(o.id) ?? null }));
}

/**
 * The entity type (DAO name) of an entity created at this path: the kind whose collection is the path's last
 * collection segment (`/consumers/c/key-auth` → keyauth_credentials); the segment itself when no kind claims it.
 */
export function entityTypeOf(req: Request): string {
  const segs = req.path.split('/').filter((s) => s !== '');
  const collection = segs.length % 2 === 1 ? segs[segs.length - 1]! : (segs[segs.length - 2] ?? '');
  const kinds = adminContext(req)?.entities.allKinds() ?? [];
  const kind = kinds.find((k) => k.def.adminPath === collection || Object.values(k.nestedPaths ?? {}).includes(collection));
  return kind?.def.name ?? collection;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
