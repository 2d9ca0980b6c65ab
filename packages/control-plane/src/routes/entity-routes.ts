import type { Request, Response } from 'express';
import { Errors } from '@gatehouse/core';
import { param, sendList, writeInput, type AdminContext } from '../http/context';
import type { EntityKind } from '../service/entity-kind';
import { shownTo } from '../http/private-material';
import type { ListResult, Scope } from '../service/entity-service';
import { parseListQuery } from '../service/paging';

function shownListTo(res: Response, kind: EntityKind, result: ListResult): ListResult {
  return { ...result, data: result.data.map((entity) => shownTo(res, kind, entity)) };
}

/**
 * Kong's generated endpoints for one entity:
 *   /{entities}                       GET list, POST create
 *   /{entities}/{id_or_key}           GET, PUT upsert, PATCH, DELETE (204 even when absent)
 * and for every foreign key (child → parent):
 *   /{parents}/{p}/{children}         GET list of the parent's children, POST one with the parent forced
 *   /{parents}/{p}/{children}/{c}     GET, PUT, PATCH, DELETE (404 when absent or another parent's)
 *   /{children}/{c}/{field}           GET the referenced parent
 */
export function mountEntityRoutes(ctx: AdminContext, kind: EntityKind): void {
  const { entities, resources } = ctx;
  const base = `/${kind.def.adminPath}`;

  const filtersOf = (req: Request): Record<string, string> | undefined => {
    const filters: Record<string, string> = {};
    for (const field of kind.listFilters ?? []) {
      const value = req.query[field];
      if (value !== undefined) filters[field] = Array.isArray(value) ? String(value[value.length - 1]) : String(value);
    }
    return Object.keys(filters).length ? filters : undefined;
  };

  resources.add(base, {
    get: async (req, res) => {
      const q = parseListQuery(req.query);
      sendList(req, res, q, shownListTo(res, kind, await entities.list(kind, q, undefined, filtersOf(req))));
    },
    post: async (req, res) => {
      res.status(201).json(shownTo(res, kind, await entities.create(kind, writeInput(req, res))));
    },
  }, { entity: kind.def.name, shape: 'collection' });
  resources.add(`${base}/:ref`, {
    get: async (req, res) => {
      res.json(shownTo(res, kind, await entities.get(kind, param(req, 'ref'))));
    },
    put: async (req, res) => {
      res.json(shownTo(res, kind, await entities.upsert(kind, param(req, 'ref'), writeInput(req, res))));
    },
    patch: async (req, res) => {
      res.json(shownTo(res, kind, await entities.patch(kind, param(req, 'ref'), writeInput(req, res))));
    },
    delete: async (req, res) => {
      await entities.remove(kind, param(req, 'ref'));
      res.status(204).end();
    },
  }, { entity: kind.def.name, shape: 'one' });

  for (const fk of kind.def.foreignKeys) {
    const parent = entities.kind(fk.entity);
    const segment = kind.nestedPaths?.[fk.entity] ?? kind.def.adminPath;
    const nested = `/${parent.def.adminPath}/:parent/${segment}`;
    const scopeOf = async (req: Request): Promise<Scope> => {
      const found = await entities.find(parent, param(req, 'parent'));
      if (!found) throw Errors.notFound();
      return { field: fk.field, id: found.id };
    };

    resources.add(nested, {
      get: async (req, res) => {
        const q = parseListQuery(req.query);
        sendList(req, res, q, shownListTo(res, kind, await entities.list(kind, q, await scopeOf(req))));
      },
      post: async (req, res) => {
        res.status(201).json(shownTo(res, kind, await entities.create(kind, writeInput(req, res), await scopeOf(req))));
      },
    }, { entity: kind.def.name, shape: 'nested-collection', parent: parent.def.name });
    resources.add(`${nested}/:ref`, {
      get: async (req, res) => {
        res.json(shownTo(res, kind, await entities.get(kind, param(req, 'ref'), await scopeOf(req))));
      },
      put: async (req, res) => {
        res.json(shownTo(res, kind, await entities.upsert(kind, param(req, 'ref'), writeInput(req, res), await scopeOf(req))));
      },
      patch: async (req, res) => {
        res.json(shownTo(res, kind, await entities.patch(kind, param(req, 'ref'), writeInput(req, res), await scopeOf(req))));
      },
      delete: async (req, res) => {
        if (!(await entities.remove(kind, param(req, 'ref'), await scopeOf(req)))) throw Errors.notFound();
        res.status(204).end();
      },
    }, { entity: kind.def.name, shape: 'nested-one', parent: parent.def.name });
    resources.add(`${base}/:ref/${fk.field}`, {
      get: async (req, res) => {
        const child = await entities.find(kind, param(req, 'ref'));
        const ref = child?.[fk.field] as { id?: string } | null | undefined;
        if (!ref?.id) throw Errors.notFound();
        res.json(shownTo(res, parent, await entities.get(parent, ref.id)));
      },
    }, { entity: kind.def.name, shape: 'reference', field: fk.field, parent: parent.def.name });
  }
}
