import type { Response } from 'express';
import { redactPrivateFields } from '@gatehouse/core';
import type { EntityKind } from '../service/entity-kind';

/**
 * Whether the caller of a request may see the private material of one entity (decision 18): only callers that may
 * create or update it. RBAC sets this per request; without RBAC the admin API is the operator's own and every
 * caller may.
 */
export type PrivateAccess = (kind: EntityKind, entity: Record<string, unknown>) => boolean;

interface PrivateLocals {
  gatehousePrivateAccess?: PrivateAccess;
}

export function setPrivateAccess(res: Response, access: PrivateAccess): void {
  (res.locals as PrivateLocals).gatehousePrivateAccess = access;
}

/** The one redaction step of the response path: the entity as this request's caller may see it. */
export function shownTo(res: Response, kind: EntityKind, entity: Record<string, unknown>): Record<string, unknown> {
  const fields = kind.def.privateFields;
  if (!fields || fields.length === 0) return entity;
  const access = (res.locals as PrivateLocals).gatehousePrivateAccess;
  if (!access || access(kind, entity)) return entity;
  return redactPrivateFields(fields, entity);
}
