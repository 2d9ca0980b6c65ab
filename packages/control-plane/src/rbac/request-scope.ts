import type { Response } from 'express';
import type { Workspace } from '@gatehouse/core';
import { accessOfLocals } from '../http/context';
import type { Caller, RbacScope } from './service';

/**
 * What the workspace-prefix and enforcement middlewares learn about a request, kept on `res.locals` so the
 * routes of every part of the admin API, and the hooks of the entity kinds (WriteInput.locals), can read it.
 */
interface RbacLocals {
  /** the request's workspace (from a `/{workspace}/…` prefix, else `default`) */
  gatehouseWorkspace?: Workspace;
  /** the authenticated caller, when enforcement is on */
  gatehouseCaller?: Caller;
}

const localsOf = (res: Response): RbacLocals => res.locals as RbacLocals;

export function setWorkspace(res: Response, ws: Workspace): void {
  localsOf(res).gatehouseWorkspace = ws;
}

export function setCaller(res: Response, caller: Caller): void {
  localsOf(res).gatehouseCaller = caller;
}

export function workspaceOf(res: Response): Workspace | undefined {
  return localsOf(res).gatehouseWorkspace;
}

export function callerOf(res: Response): Caller | undefined {
  return localsOf(res).gatehouseCaller;
}

/** The scope of a request; the workspace middleware must have run (it always sets one). */
export function scopeOf(res: Response): RbacScope {
  const scope = scopeOfLocals(res.locals);
  if (!scope) throw new Error('workspace middleware did not run');
  return scope;
}

/** The scope a write's locals carry (WriteInput.locals); null when the write did not come through the middleware. */
export function scopeOfLocals(locals: Record<string, unknown> | undefined): RbacScope | null {
  const { gatehouseWorkspace, gatehouseCaller } = (locals ?? {}) as RbacLocals;
  return gatehouseWorkspace ? { workspace: gatehouseWorkspace, caller: gatehouseCaller ?? null, access: accessOfLocals(locals) } : null;
}
