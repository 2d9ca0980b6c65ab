import { openApiDocument } from '@gatehouse/core';
import type { AdminContext } from '../http/context';

/** GET /openapi.json: built from the same schemas that validate requests, entities registered so far included. */
export function mountOpenApiRoute(ctx: AdminContext, version: string): void {
  const { resources, entities, plugins } = ctx;
  resources.add('/openapi.json', {
    get: (_req, res) => {
      const document = openApiDocument({
        version,
        entities: entities.allKinds().map((k) => ({
          name: k.def.name,
          adminPath: k.def.adminPath,
          schema: k.def.schema,
          endpointKey: k.def.endpointKey,
        })),
        plugins: plugins.map((p) => ({ name: p.name, configSchema: p.configSchema })),
      });
      res.json(document);
    },
  });
}
