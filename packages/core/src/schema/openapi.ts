import { openApiSchemas, type JsonObject, type OpenApiEntity, type OpenApiPlugin } from './openapi-components';
import { entityCollectionOperations, entityOperations, entityParamName, entityPathParameter } from './openapi-operations';

export * from './openapi-components';
export * from './openapi-operations';

/**
 * The admin API's OpenAPI 3.1 parts, built from the same zod schemas that validate requests. Each entity gives
 * three components: `<Name>` (what responses hold: every field, defaults filled), `<Name>Input` (what a create or
 * PUT accepts: fields with defaults are optional) and `<Name>Patch` (every field optional); each plugin gives
 * `<Plugin>Config` and `<Plugin>ConfigInput`. Entity operations cover the collection (`GET` list, `POST` create) and
 * the entity (`GET`, `PUT` upsert, `PATCH`, `DELETE`) at `/{adminPath}/{id_or_key}` (`/{adminPath}/{id}` without an
 * endpoint key), directly or under a parent entity.
 *
 * Defaults the schemas generate (a fresh `provision_key` per call) are never written into the document, so the same
 * schemas always give the same bytes.
 */

export interface OpenApiInput {
  entities: OpenApiEntity[];
  plugins: OpenApiPlugin[];
  version: string;
  title?: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  paths: Record<string, JsonObject>;
  components: { schemas: Record<string, JsonObject> };
}

/** An entity document built from the entities' own schemas only (the admin API adds its other routes to these parts). */
export function openApiDocument(input: OpenApiInput): OpenApiDocument {
  const paths: Record<string, JsonObject> = {};
  for (const entity of input.entities) {
    const param = entityParamName(entity);
    paths[`/${entity.adminPath}`] = entityCollectionOperations(entity);
    paths[`/${entity.adminPath}/{${param}}`] = { parameters: [entityPathParameter(entity, param)], ...entityOperations(entity) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: input.title ?? 'Gatehouse Admin API',
      version: input.version,
      description: 'Kong-compatible admin API. Bodies may be JSON, form-urlencoded (dotted keys, `paths[]`, `paths[1]`) or multipart.',
    },
    paths,
    components: { schemas: openApiSchemas(input.entities, input.plugins) },
  };
}
