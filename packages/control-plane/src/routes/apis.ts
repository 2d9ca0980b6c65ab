import type { Request } from 'express';
import { Errors } from '@gatehouse/core';
import { param, sendList, writeInput, type AdminContext } from '../http/context';
import { apis } from '../legacy/api-entity';
import { ApiService, presentApi } from '../legacy/api-service';
import type { Scope } from '../service/entity-service';
import { encodeOffset, parseListQuery } from '../service/paging';
import { isUuid } from '../service/references';

/**
 * Kong 0.10–0.14's `/apis` endpoints over services + routes:
 *   GET|POST|PUT /apis, GET|PATCH|DELETE /apis/{name_or_id},
 *   GET|POST|PUT /apis/{api}/plugins, GET|PATCH|DELETE /apis/{api}/plugins/{id}.
 * An API's plugins are the plugins of its service; they are returned with the API's id as `api_id`.
 */
export function mountApiRoutes(ctx: AdminContext): void {
  const { resources, entities, store } = ctx;
  const service = new ApiService(entities);
  const plugins = () => entities.kind('plugins');

  const apiScope = async (req: Request): Promise<{ scope: Scope; apiId: string }> => {
    const api = await service.get(param(req, 'api'));
    return { scope: { field: 'service', id: (api.service as { id: string }).id }, apiId: api.id };
  };
  const withApiId = (plugin: Record<string, unknown>, apiId: string) => ({ ...plugin, api_id: apiId });

  resources.add('/apis', {
    get: async (req, res) => {
      const q = parseListQuery(req.query);
      const after = q.after?.[0];
      if (after !== undefined && !isUuid(after)) throw Errors.invalidOffset(encodeOffset(q.after!));
      const page = await store.repo(apis.name).page(store.db, { size: q.size, after: after as string | undefined });
      sendList(req, res, q, { data: page.items.map(presentApi), offset: page.next === null ? null : encodeOffset([page.next]) });
    },
    post: async (req, res) => {
      res.status(201).json(presentApi(await service.create(writeInput(req, res))));
    },
    put: async (req, res) => {
      const { api, created } = await service.put(writeInput(req, res));
      res.status(created ? 201 : 200).json(presentApi(api));
    },
  });

  resources.add('/apis/:api', {
    get: async (req, res) => {
      res.json(presentApi(await service.get(param(req, 'api'))));
    },
    patch: async (req, res) => {
      const existing = await service.get(param(req, 'api'));
      res.json(presentApi(await service.update(existing, writeInput(req, res), false)));
    },
    delete: async (req, res) => {
      await service.remove(await service.get(param(req, 'api')));
      res.status(204).end();
    },
  });

  resources.add('/apis/:api/plugins', {
    get: async (req, res) => {
      const { scope, apiId } = await apiScope(req);
      const q = parseListQuery(req.query);
      const result = await entities.list(plugins(), q, scope);
      sendList(req, res, q, { ...result, data: result.data.map((p) => withApiId(p, apiId)) });
    },
    post: async (req, res) => {
      const { scope, apiId } = await apiScope(req);
      res.status(201).json(withApiId(await entities.create(plugins(), writeInput(req, res), scope), apiId));
    },
    put: async (req, res) => {
      const { scope, apiId } = await apiScope(req);
      const input = writeInput(req, res);
      const id = input.body.id;
      if (isUuid(id) && (await entities.find(plugins(), id, scope))) {
        res.status(200).json(withApiId(await entities.upsert(plugins(), id, input, scope), apiId));
      } else {
        res.status(201).json(withApiId(await entities.create(plugins(), input, scope), apiId));
      }
    },
  });

  resources.add('/apis/:api/plugins/:plugin', {
    get: async (req, res) => {
      const { scope, apiId } = await apiScope(req);
      res.json(withApiId(await entities.get(plugins(), param(req, 'plugin'), scope), apiId));
    },
    patch: async (req, res) => {
      const { scope, apiId } = await apiScope(req);
      res.json(withApiId(await entities.patch(plugins(), param(req, 'plugin'), writeInput(req, res), scope), apiId));
    },
    delete: async (req, res) => {
      const { scope } = await apiScope(req);
      if (!(await entities.remove(plugins(), param(req, 'plugin'), scope))) throw Errors.notFound();
      res.status(204).end();
    },
  });
}
