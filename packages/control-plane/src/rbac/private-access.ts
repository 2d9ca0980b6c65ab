import type { Request } from 'express';
import type { PrivateAccess } from '../http/private-material';
import { decideEndpoint, decideEntity, decisionPath } from './decide';
import type { Caller, RbacScope } from './service';

/**
 * Decision 18 under RBAC: a caller sees an entity's private material only when it may write that entity, that is
 * create or update at the request's endpoint (endpoint checks: `on`, `both`) and update the entity itself (entity
 * checks: `entity`, `both`). The built-in `read-only` role may do neither, so it gets the material removed.
 */
export function privateAccessOf(req: Request, caller: Caller, scope: RbacScope, checks: { endpoint: boolean; entity: boolean }): PrivateAccess {
  let endpointAllows: boolean | null = null;
  const mayWriteEndpoint = (): boolean => {
    if (endpointAllows === null) {
      const path = decisionPath(req.path);
      const workspace = scope.workspace.name;
      endpointAllows = (['update', 'create'] as const).some((action) => decideEndpoint(caller.endpointRules, { workspace, path, action }).allowed);
    }
    return endpointAllows;
  };
  return (_kind, entity) => {
    if (checks.endpoint && !mayWriteEndpoint()) return false;
    if (checks.entity) {
      const id = entity.id;
      if (typeof id !== 'string') return false;
      return decideEntity(caller.entityRules, { entityId: id, workspaceId: scope.workspace.id, action: 'update' });
    }
    return true;
  };
}
