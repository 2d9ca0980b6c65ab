import type { Request, Response } from 'express';
import { Errors } from '@gatehouse/core';
import { accessOf, param, sendList, writeInput, type AdminContext } from '../http/context';
import type { EntityKind } from '../service/entity-kind';
import { shownTo } from '../http/private-material';
import type { ListResult, Scope } from '../service/entity-service';
import { parseListQuery } from '../service/paging';
import { parentReferenceHandlers } from './parent-reference';

function shownListTo(res: Response, kind: EntityKind, result: ListResult): ListResult {
  return { ...result, data: result.data.map((entity) => shownTo(res, kind, entity)) };
}

/** How a family departs from Kong's generated endpoints (RBAC's own families). */
export interface EntityRouteOptions {
  /** the scope every top-level operation runs in (RBAC roles: the request's workspace) */
  scope?: (res: Response) => Scope | undefined;
  /** checks run before every operation (workspaces are served only outside workspace prefixes) */
  guard?: (res: Response) => void;
  /** rows of a listing the caller may see (workspaces: those its rules name) */
  listed?: (res: Response, entity: Record<string, unknown>) => boolean;
  /** PUT answers 201 when it created the entity */
  putCreatedIs201?: boolean;
  /** mount the nested and parent-reference routes of the foreign keys; default true */
  nested?: boolean;
  /** the name of the path parameter of one entity (`/rbac/users/:user`); default `ref` */
  refParam?: string;
  /** documented by the catalogue of custom routes (openapi/docs/) rather than from the kind's definition */
  catalogued?: boolean;
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
export function mountEntityRoutes(ctx: AdminContext, kind: EntityKind, options: EntityRouteOptions = {}): void {
  const { resources } = ctx;
  const { entities } = ctx;
  const base = `/${kind.def.adminPath}`;
  const refName = options.refParam ?? 'ref';
  const docs = (shape: 'collection' | 'one') => (options.catalogued ? undefined : { entity: kind.def.name, shape });
  const scopeOf = (res: Response): Scope | undefined => {
    options.guard?.(res);
    return options.scope?.(res);
  };
  const listedTo = (res: Response, result: ListResult): ListResult =>
    options.listed ? { ...result, data: result.data.filter((e) => options.listed!(res, e)) } : result;

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
      const scope = scopeOf(res);
      const q = parseListQuery(req.query);
      sendList(req, res, q, shownListTo(res, kind, listedTo(res, await entities.list(kind, q, scope, filtersOf(req), accessOf(res)))));
    },
    post: async (req, res) => {
      const scope = scopeOf(res);
      res.status(201).json(shownTo(res, kind, await entities.create(kind, writeInput(req, res), scope)));
    },
  }, docs('collection'));
  resources.add(`${base}/:${refName}`, {
    get: async (req, res) => {
      res.json(shownTo(res, kind, await entities.get(kind, param(req, refName), scopeOf(res), accessOf(res))));
    },
    put: async (req, res) => {
      const { entity, created } = await entities.upsertReporting(kind, param(req, refName), writeInput(req, res), scopeOf(res));
      res.status(created && options.putCreatedIs201 ? 201 : 200).json(shownTo(res, kind, entity));
    },
    patch: async (req, res) => {
      res.json(shownTo(res, kind, await entities.patch(kind, param(req, refName), writeInput(req, res), scopeOf(res))));
    },
    delete: async (req, res) => {
      const ref = param(req, refName);
      const removed = await entities.remove(kind, ref, scopeOf(res), writeInput(req, res));
      if (!removed && kind.deleteMissingIsNotFound) throw entities.notFound(kind, ref);
      res.status(204).end();
    },
  }, docs('one'));

  if (options.nested === false) return;
  for (const fk of kind.def.foreignKeys) {
    const parent = entities.kind(fk.entity);
    const segment = kind.nestedPaths?.[fk.entity] ?? kind.def.adminPath;
    const nested = `/${parent.def.adminPath}/:parent/${segment}`;
    // the caller reads the parent the path names
    const parentScope = async (req: Request, res: Response): Promise<Scope> => {
      const found = await entities.find(parent, param(req, 'parent'), undefined, undefined, accessOf(res));
      if (!found) throw Errors.notFound();
      return { field: fk.field, id: found.id };
    };

    resources.add(nested, {
      get: async (req, res) => {
        const q = parseListQuery(req.query);
        const scope = await parentScope(req, res);
        sendList(req, res, q, shownListTo(res, kind, await entities.list(kind, q, scope, undefined, accessOf(res))));
      },
      post: async (req, res) => {
        res.status(201).json(shownTo(res, kind, await entities.create(kind, writeInput(req, res), await parentScope(req, res))));
      },
    }, { entity: kind.def.name, shape: 'nested-collection', parent: parent.def.name });
    resources.add(`${nested}/:ref`, {
      get: async (req, res) => {
        const scope = await parentScope(req, res);
        res.json(shownTo(res, kind, await entities.get(kind, param(req, 'ref'), scope, accessOf(res))));
      },
      put: async (req, res) => {
        res.json(shownTo(res, kind, await entities.upsert(kind, param(req, 'ref'), writeInput(req, res), await parentScope(req, res))));
      },
      patch: async (req, res) => {
        res.json(shownTo(res, kind, await entities.patch(kind, param(req, 'ref'), writeInput(req, res), await parentScope(req, res))));
      },
      delete: async (req, res) => {
        if (!(await entities.remove(kind, param(req, 'ref'), await parentScope(req, res), writeInput(req, res)))) throw Errors.notFound();
        res.status(204).end();
      },
    }, { entity: kind.def.name, shape: 'nested-one', parent: parent.def.name });
    resources.add(`${base}/:ref/${fk.field}`, parentReferenceHandlers(entities, kind, fk.field, parent), { entity: kind.def.name, shape: 'reference', field: fk.field, parent: parent.def.name });
  }
}
