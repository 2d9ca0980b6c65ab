import type { Request } from 'express';
import type { AdminContext } from '../http/context';
import type { EntityKind } from '../service/entity-kind';
import type { RbacAction } from './decide';
import type { RbacScope, RbacService } from './service';

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
  const own = await resolveRbacEntity(svc, scope, segs);
  return own ?? resolveConfigEntities(req, svc, segs);
}

/**
 * RBAC's own families, looked up as their routes look them up (the same kinds, the same scope); null when the path
 * is not theirs. Roles live in their workspace, a workspace in itself; users and admins in none.
 */
async function resolveRbacEntity(svc: RbacService, scope: RbacScope, segs: string[]): Promise<Located[] | null> {
  const { entities, users, roles, admins, workspaces } = svc.families;
  for (const kind of [users, roles, admins, workspaces]) {
    const base = kind.def.adminPath.split('/');
    if (!base.every((part, i) => segs[i] === part)) continue;
    const ref = segs[base.length];
    if (ref === undefined) return [];
    const inScope = kind === roles ? { field: 'workspace', id: scope.workspace.id } : undefined;
    const found = await entities.find(kind, ref, inScope).catch(() => null);
    if (!found) return [];
    const workspaceId = kind === roles ? scope.workspace.id : kind === workspaces ? found.id : null;
    return [{ id: found.id, workspaceId, endsAt: base.length + 1 }];
  }
  return segs[0] === 'rbac' ? [] : null;
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

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
