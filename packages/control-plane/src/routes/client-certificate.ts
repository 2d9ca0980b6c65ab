import { Errors } from '@gatehouse/core';
import type { Request, Response } from 'express';
import { accessOf, param, writeInput, type AdminContext } from '../http/context';
import { shownTo } from '../http/private-material';
import type { EntityAccess } from '../service/entity-access';
import type { EntityKind } from '../service/entity-kind';
import { parentReferenceHandlers } from './parent-reference';

/**
 * Kong's endpoints of the `client_certificate` foreign key of services and upstreams (certificates are the parents):
 *   /{services|upstreams}/{id}/client_certificate       GET, PUT, PATCH, DELETE (as every `/{child}/{c}/{field}`)
 *   /certificates/{c}/{services|upstreams}               GET those presenting the certificate, POST one presenting it
 *   /certificates/{c}/{services|upstreams}/{id}          GET, PUT, PATCH, DELETE one of them (404 when it presents another)
 */
export function mountClientCertificateRoutes(ctx: AdminContext): void {
  const { entities, resources } = ctx;
  const certificates = entities.kind('certificates');
  for (const name of ['services', 'upstreams'] as const) {
    const child = entities.kind(name);
    resources.add(`/${name}/:ref/client_certificate`, parentReferenceHandlers(entities, child, 'client_certificate', certificates));
    mountNested(ctx, child, certificates);
  }
}

function mountNested(ctx: AdminContext, child: EntityKind, certificates: EntityKind): void {
  const { entities, resources, store } = ctx;
  const base = `/certificates/:parent/${child.def.adminPath}`;
  // the caller reads the certificate the path names, and the entity it names unless the request writes that one
  const certificateId = async (req: Request, res: Response): Promise<string> => {
    const found = await entities.find(certificates, param(req, 'parent'), undefined, undefined, accessOf(res));
    if (!found) throw Errors.notFound();
    return found.id as string;
  };
  const presents = (entity: Record<string, unknown> | null, id: string) => (entity?.client_certificate as { id?: string } | null | undefined)?.id === id;
  const mine = async (req: Request, res: Response, access?: EntityAccess) => {
    const id = await certificateId(req, res);
    const found = await entities.find(child, param(req, 'ref'), undefined, undefined, access);
    if (!found || !presents(found, id)) throw Errors.notFound();
    return { id, entity: found };
  };
  const forced = (req: Request, res: Response, id: string) => {
    const input = writeInput(req, res);
    return { ...input, body: { ...input.body, client_certificate: { id } } };
  };
  resources.add(base, {
    get: async (req, res) => {
      const id = await certificateId(req, res);
      const all = await store.repo(child.def.name).all(store.db, undefined, accessOf(res)?.readable(child));
      const data = all.filter((e) => presents(e, id)).map((e) => shownTo(res, child, entities.present(child, e)));
      res.status(200).json({ data, next: null });
    },
    post: async (req, res) => {
      const id = await certificateId(req, res);
      res.status(201).json(shownTo(res, child, await entities.create(child, forced(req, res, id))));
    },
  });
  resources.add(`${base}/:ref`, {
    get: async (req, res) => void res.json(shownTo(res, child, entities.present(child, (await mine(req, res, accessOf(res))).entity))),
    put: async (req, res) => {
      const id = await certificateId(req, res);
      const existing = await entities.find(child, param(req, 'ref'));
      if (existing && !presents(existing, id)) throw Errors.notFound();
      res.json(shownTo(res, child, await entities.upsert(child, param(req, 'ref'), forced(req, res, id))));
    },
    patch: async (req, res) => {
      const { id, entity } = await mine(req, res);
      res.json(shownTo(res, child, await entities.patch(child, entity.id as string, forced(req, res, id))));
    },
    delete: async (req, res) => {
      const { entity } = await mine(req, res);
      await entities.remove(child, entity.id as string, undefined, writeInput(req, res));
      res.status(204).end();
    },
  });
}
