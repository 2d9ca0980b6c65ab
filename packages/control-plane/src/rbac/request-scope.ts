import type { Response } from 'express';
import type { Caller, RbacScope } from './service';
import type { WorkspaceRow } from './store';

/**
 * What the workspace-prefix and enforcement middlewares learn about a request, kept on `res.locals` so the
 * routes of every part of the admin API can read it.
 */
interface RbacLocals {
  /** the request's workspace (from a `/{workspace}/…` prefix, else `default`) */
  gatehouseWorkspace?: WorkspaceRow;
  /** the authenticated caller, when enforcement is on */
  gatehouseCaller?: Caller;
}

export function setWorkspace(res: Response, ws: WorkspaceRow): void {
  (res.locals as RbacLocals).gatehouseWorkspace = ws;
}

export function setCaller(res: Response, caller: Caller): void {
  (res.locals as RbacLocals).gatehouseCaller = caller;
}

export function workspaceOf(res: Response): WorkspaceRow | undefined {
  return (res.locals as RbacLocals).gatehouseWorkspace;
}

export function callerOf(res: Response): Caller | undefined {
  return (res.locals as RbacLocals).gatehouseCaller;
}

/** The scope of a request; the workspace middleware must have run (it always sets one). */
export function scopeOf(res: Response): RbacScope {
  const workspace = workspaceOf(res);
  if (!workspace) throw new Error('workspace middleware did not run');
  return { workspace, caller: callerOf(res) ?? null };
}
