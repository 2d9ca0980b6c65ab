import { jsonSchemaOf } from '@gatehouse/core';
import type { AdminContext } from '../http/context';
import { apiInputSchema } from '../legacy/api-entity';
import { adminOpenApiDocument } from '../openapi/admin-document';
import { CORE_ROUTE_DOCS, CORE_TAG_DESCRIPTIONS } from '../openapi/docs/core-routes';
import { GATEWAY_ROUTE_DOCS, GATEWAY_TAG_DESCRIPTIONS } from '../openapi/docs/gateway-routes';
import { mergeCatalogues, OPERATIONS_ROUTE_DOCS, OPERATIONS_TAG_DESCRIPTIONS } from '../openapi/docs/operations-routes';
import { RBAC_ROUTE_DOCS, RBAC_TAG_DESCRIPTIONS, rbacSchemas } from '../openapi/docs/rbac-routes';
import { mountDocsPage } from '../openapi/docs-page';

/**
 * GET /openapi.json: every route the app registered, entity routes from the schemas that validate requests. Built on
 * the first request (every module has registered its routes by then) and served as the same bytes afterwards.
 * GET /docs renders it.
 */
export function mountOpenApiRoute(ctx: AdminContext, version: string): void {
  const { resources, entities, plugins } = ctx;
  let body: string | null = null;
  const build = () =>
    JSON.stringify(
      adminOpenApiDocument({
        version,
        routes: resources.routes(),
        entities: entities.allKinds().map((k) => ({
          name: k.def.name,
          adminPath: k.def.adminPath,
          schema: k.def.schema,
          endpointKey: k.def.endpointKey,
        })),
        plugins: plugins.map((p) => ({ name: p.name, configSchema: p.configSchema })),
        catalogue: mergeCatalogues(CORE_ROUTE_DOCS, RBAC_ROUTE_DOCS, GATEWAY_ROUTE_DOCS, OPERATIONS_ROUTE_DOCS),
        tagDescriptions: { ...CORE_TAG_DESCRIPTIONS, ...RBAC_TAG_DESCRIPTIONS, ...GATEWAY_TAG_DESCRIPTIONS, ...OPERATIONS_TAG_DESCRIPTIONS },
        extraSchemas: { Api: jsonSchemaOf(apiInputSchema, 'output'), ApiInput: jsonSchemaOf(apiInputSchema, 'input'), ...rbacSchemas() },
      }),
    );
  resources.add(
    '/openapi.json',
    {
      get: (_req, res) => {
        body ??= build();
        res.type('application/json').send(body);
      },
    },
    { get: { summary: 'This document (OpenAPI 3.1)', tag: 'node', responses: { 200: { description: 'The document', schema: { type: 'object' } } } } },
  );
  mountDocsPage(ctx);
}
