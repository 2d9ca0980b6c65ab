import type { Request, Response, Router } from 'express';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { EntityAccess } from '../service/entity-access';
import type { EntityKind } from '../service/entity-kind';
import type { EntityService, ListResult, WriteInput } from '../service/entity-service';
import type { ListQuery } from '../service/paging';
import { nextLink } from '../service/paging';
import type { ConfigStore } from '../store/config-store';
import type { ResourceRegistry } from './resources';
import type { EntityRouteOptions } from '../routes/entity-routes';

/** What route modules (ours and other packages') get to add admin endpoints. */
export interface AdminContext {
  store: ConfigStore;
  entities: EntityService;
  /** plugins installed on this node */
  plugins: PluginDefinition[];
  router: Router;
  resources: ResourceRegistry;
  /** generic CRUD, nested and parent routes for a registered entity kind */
  mountEntity(kind: EntityKind, options?: EntityRouteOptions): void;
}

interface AccessLocals {
  gatehouseAccess?: EntityAccess;
}

/** Sets the caller of this request as the EntityService authorizes it (RBAC's entity checks). */
export function setAccess(res: Response, access: EntityAccess): void {
  (res.locals as AccessLocals).gatehouseAccess = access;
}

/** The request's caller for the EntityService: pass it to reads and listings (writes carry it in writeInput). */
export function accessOf(res: Response): EntityAccess | undefined {
  return accessOfLocals(res.locals);
}

export function accessOfLocals(locals: Record<string, unknown> | undefined): EntityAccess | undefined {
  return (locals as AccessLocals | undefined)?.gatehouseAccess;
}

export function writeInput(req: Request, res: Response): WriteInput {
  return { body: (req.body ?? {}) as Record<string, unknown>, form: res.locals.form === true, locals: res.locals, access: accessOf(res) };
}

/** the request path without its trailing slash, the base of `next` links */
export function collectionPath(req: Request): string {
  return req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
}

export function param(req: Request, name: string): string {
  return String(req.params[name]);
}

/** `{data, offset, next}` (offset only when there is a next page) */
export function sendList(req: Request, res: Response, q: ListQuery, result: ListResult): void {
  const body: Record<string, unknown> = { data: result.data };
  if (result.offset !== null) body.offset = result.offset;
  body.next = nextLink(collectionPath(req), result.offset, q);
  res.status(200).json(body);
}
