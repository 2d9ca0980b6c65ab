import { randomUUID } from 'node:crypto';
import { Errors } from '@gatehouse/core';
import type { Request, Response } from 'express';
import { accessOf, param, writeInput } from '../http/context';
import { shownTo } from '../http/private-material';
import type { Handlers } from '../http/resources';
import type { EntityKind } from '../service/entity-kind';
import type { EntityService } from '../service/entity-service';

/**
 * Kong's `/{children}/{c}/{field}` endpoint (`/routes/{r}/service`, `/services/{s}/client_certificate`): GET the
 * referenced entity; PUT upserts it (when the child references none, creates one under a new id and makes the child
 * reference it); PATCH updates it (404 when the child references none); DELETE answers 405 (404 when there is none).
 */
export function parentReferenceHandlers(entities: EntityService, child: EntityKind, field: string, parent: EntityKind): Handlers {
  // the caller reads the child the path names; the referenced entity is authorized as it is read or written
  const referenced = async (req: Request, res: Response): Promise<{ childId: string; id: string | null }> => {
    const found = await entities.find(child, param(req, 'ref'), undefined, undefined, accessOf(res));
    if (!found) throw Errors.notFound();
    const ref = found[field] as { id?: string } | null | undefined;
    return { childId: found.id as string, id: ref?.id ?? null };
  };
  return {
    get: async (req: Request, res: Response) => {
      const { id } = await referenced(req, res);
      if (!id) throw Errors.notFound();
      res.json(shownTo(res, parent, await entities.get(parent, id, undefined, accessOf(res))));
    },
    put: async (req: Request, res: Response) => {
      const { childId, id } = await referenced(req, res);
      const target = id ?? randomUUID();
      const entity = await entities.upsert(parent, target, writeInput(req, res));
      if (!id) await entities.patch(child, childId, { body: { [field]: { id: entity.id } }, locals: res.locals });
      res.status(200).json(shownTo(res, parent, entity));
    },
    patch: async (req: Request, res: Response) => {
      const { id } = await referenced(req, res);
      if (!id) throw Errors.notFound();
      res.json(shownTo(res, parent, await entities.patch(parent, id, writeInput(req, res))));
    },
    delete: async (req: Request, res: Response) => {
      const { id } = await referenced(req, res);
      if (!id) throw Errors.notFound();
      throw Errors.methodNotAllowed();
    },
  };
}
