import { z } from 'zod';

/**
 * The admin API's OpenAPI 3.1 document, built from the same zod schemas that validate requests. Each entity gives
 * three components: `<Name>` (what responses hold: every field, defaults filled), `<Name>Input` (what a create or
 * PUT accepts: fields with defaults are optional) and `<Name>Patch` (every field optional); each plugin gives
 * `<Plugin>Config` and `<Plugin>ConfigInput`. Paths cover the collection (`GET` list, `POST` create) and the entity
 * (`GET`, `PUT` upsert, `PATCH`, `DELETE`) at `/{adminPath}/{id_or_key}` (`/{adminPath}/{id}` without an endpoint key).
 * The result is a plain object: callers may add paths (nested routes, custom endpoints) before serving it.
 */

export interface OpenApiEntity {
  name: string;
  adminPath: string;
  schema: z.ZodObject;
  endpointKey?: string;
}

export interface OpenApiPlugin {
  name: string;
  configSchema: z.ZodObject;
}

export interface OpenApiInput {
  entities: OpenApiEntity[];
  plugins: OpenApiPlugin[];
  version: string;
  title?: string;
}

export type JsonObject = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  paths: Record<string, JsonObject>;
  components: { schemas: Record<string, JsonObject> };
}

const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

export function openApiDocument(input: OpenApiInput): OpenApiDocument {
  const schemas: Record<string, JsonObject> = {
    KongError: {
      type: 'object',
      description: "Kong's error body: code 2 schema violation, 4 foreign key, 5 unique violation (409), …",
      properties: {
        code: { type: 'integer' },
        name: { type: 'string' },
        message: { type: 'string' },
        fields: { type: 'object', additionalProperties: true },
      },
      required: ['code', 'name', 'message'],
    },
    Message: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  };
  const paths: Record<string, JsonObject> = {};

  for (const entity of input.entities) {
    const base = componentName(singular(entity.name));
    schemas[base] = jsonSchemaOf(entity.schema, 'output');
    schemas[`${base}Input`] = jsonSchemaOf(entity.schema, 'input');
    schemas[`${base}Patch`] = withoutDefaults(jsonSchemaOf(entity.schema.partial(), 'input'));
    Object.assign(paths, entityPaths(entity, base));
  }

  for (const plugin of input.plugins) {
    const base = `${componentName(plugin.name)}Config`;
    schemas[base] = { ...jsonSchemaOf(plugin.configSchema, 'output'), description: `config of the ${plugin.name} plugin` };
    schemas[`${base}Input`] = jsonSchemaOf(plugin.configSchema, 'input');
  }

  return {
    openapi: '3.1.0',
    info: {
      title: input.title ?? 'Gatehouse Admin API',
      version: input.version,
      description: 'Kong-compatible admin API. Bodies may be JSON, form-urlencoded (dotted keys, `paths[]`, `paths[1]`) or multipart.',
    },
    paths,
    components: { schemas },
  };
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonObject;
  delete json.$schema;
  return json;
}

/** A PATCH leaves omitted fields as they are, so the schema's defaults do not apply to it. */
function withoutDefaults(schema: JsonObject): JsonObject {
  const properties = schema.properties as Record<string, JsonObject> | undefined;
  if (!properties) return schema;
  const stripped = Object.fromEntries(
    Object.entries(properties).map(([key, property]) => {
      const { default: _default, ...rest } = property;
      return [key, rest];
    }),
  );
  return { ...schema, properties: stripped };
}

function entityPaths(entity: OpenApiEntity, base: string): Record<string, JsonObject> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (schema: JsonObject) => ({ content: { 'application/json': { schema } } });
  const body = (name: string) => ({
    required: true,
    content: Object.fromEntries(BODY_TYPES.map((type) => [type, { schema: ref(name) }])),
  });
  const error = (description: string) => ({ description, ...json(ref('KongError')) });
  const notFound = { description: 'Not found', ...json(ref('Message')) };
  const tag = [entity.adminPath];
  const param = entity.endpointKey ? 'id_or_key' : 'id';

  const collection = {
    get: {
      operationId: `list-${entity.name}`,
      tags: tag,
      summary: `List ${entity.name}`,
      parameters: [
        { name: 'size', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'offset', in: 'query', schema: { type: 'string' } },
        { name: 'tags', in: 'query', description: 'a,b = both tags; a/b = either', schema: { type: 'string' } },
      ],
      responses: {
        200: {
          description: 'One page',
          ...json({
            type: 'object',
            properties: {
              data: { type: 'array', items: ref(base) },
              offset: { type: 'string' },
              next: { type: ['string', 'null'] },
            },
            required: ['data', 'next'],
          }),
        },
        400: error('Invalid size, offset or tags'),
      },
    },
    post: {
      operationId: `create-${entity.name}`,
      tags: tag,
      summary: `Create one of ${entity.name}`,
      requestBody: body(`${base}Input`),
      responses: {
        201: { description: 'Created', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
  };

  const one = {
    parameters: [
      {
        name: param,
        in: 'path',
        required: true,
        description: entity.endpointKey ? `the id, or the ${entity.endpointKey} when not a UUID` : 'the id',
        schema: { type: 'string' },
      },
    ],
    get: {
      operationId: `get-${entity.name}`,
      tags: tag,
      responses: { 200: { description: 'Found', ...json(ref(base)) }, 404: notFound },
    },
    put: {
      operationId: `upsert-${entity.name}`,
      tags: tag,
      summary: 'Create or replace; omitted fields return to their defaults',
      requestBody: body(`${base}Input`),
      responses: {
        200: { description: 'Created or replaced', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
    patch: {
      operationId: `update-${entity.name}`,
      tags: tag,
      requestBody: body(`${base}Patch`),
      responses: {
        200: { description: 'Updated', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        404: notFound,
        409: error('Unique violation'),
      },
    },
    delete: {
      operationId: `delete-${entity.name}`,
      tags: tag,
      responses: { 204: { description: 'Deleted, or was not there' }, 400: error('Still referenced by another entity') },
    },
  };

  return { [`/${entity.adminPath}`]: collection, [`/${entity.adminPath}/{${param}}`]: one };
}

/** consumers → consumer, key_sets → key_set; names that do not end in a plain "s" stay as they are. */
function singular(name: string): string {
  return /[^s]s$/.test(name) ? name.slice(0, -1) : name;
}

/** key-auth → KeyAuth, key_set → KeySet: OpenAPI component names allow only [A-Za-z0-9._-]. */
function componentName(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}
