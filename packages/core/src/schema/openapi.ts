import { z } from 'zod';
import { defOf } from './walk';

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

export const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

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

/** `KongError`, `Message`, and the components of every entity and plugin. */
export function openApiSchemas(entities: OpenApiEntity[], plugins: OpenApiPlugin[]): Record<string, JsonObject> {
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
  for (const entity of entities) Object.assign(schemas, entityComponents(entity));
  for (const plugin of plugins) {
    const base = `${componentName(plugin.name)}Config`;
    schemas[base] = { ...jsonSchemaOf(plugin.configSchema, 'output'), description: `config of the ${plugin.name} plugin` };
    schemas[`${base}Input`] = jsonSchemaOf(plugin.configSchema, 'input');
  }
  return schemas;
}

/** `<Name>`, `<Name>Input` and `<Name>Patch` of one entity. */
export function entityComponents(entity: OpenApiEntity): Record<string, JsonObject> {
  const base = entityComponentName(entity);
  return {
    [base]: jsonSchemaOf(entity.schema, 'output'),
    [`${base}Input`]: jsonSchemaOf(entity.schema, 'input'),
    [`${base}Patch`]: withoutDefaults(jsonSchemaOf(entity.schema.partial(), 'input')),
  };
}

/** The JSON Schema of a zod schema as a request (`input`) or a response (`output`) holds it. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      // Kong's schema hints (`.meta({ kong })`) are for /schemas, not JSON Schema keywords
      delete jsonSchema.kong;
      if ('default' in jsonSchema && isGeneratedDefault(zodSchema)) {
        delete jsonSchema.default;
        jsonSchema.description ??= 'generated when omitted';
      }
    },
  }) as JsonObject;
  delete json.$schema;
  return json;
}

/** A default computed per use (random keys): two reads disagree, or the field says Kong generates it (`auto`). */
function isGeneratedDefault(schema: z.core.$ZodType): boolean {
  const def = defOf(schema);
  if (def.type !== 'default' && def.type !== 'prefault') return false;
  const meta = z.globalRegistry.get(schema as z.ZodType) as { kong?: { auto?: unknown } } | undefined;
  if (meta?.kong?.auto === true) return true;
  return JSON.stringify(def.defaultValue) !== JSON.stringify(def.defaultValue);
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

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject) => ({ content: { 'application/json': { schema } } });
const requestBody = (name: string) => ({
  required: true,
  content: Object.fromEntries(BODY_TYPES.map((type) => [type, { schema: ref(name) }])),
});
const error = (description: string) => ({ description, ...json(ref('KongError')) });
const notFound = { description: 'Not found', ...json(ref('Message')) };

/** Where the operations of an entity sit: directly at `/{adminPath}`, or under one parent entity. */
export interface EntityPlacement {
  /** the parent's singular name (`service`), when the collection is the children of one parent */
  parent?: string;
}

function labelOf(entity: OpenApiEntity, placement: EntityPlacement): { id: string; summary: string; tag: string[] } {
  const under = placement.parent ? `-of-${placement.parent}` : '';
  return {
    id: `${entity.name}${under}`,
    summary: placement.parent ? ` of a ${placement.parent.replace(/_/g, ' ')}` : '',
    tag: [entity.adminPath],
  };
}

/** `GET` (one page) and `POST` (create) on a collection. */
export function entityCollectionOperations(entity: OpenApiEntity, placement: EntityPlacement = {}): JsonObject {
  const base = entityComponentName(entity);
  const label = labelOf(entity, placement);
  return {
    get: {
      operationId: `list-${label.id}`,
      tags: label.tag,
      summary: `List ${entity.adminPath}${label.summary}`,
      parameters: [
        { name: 'size', in: 'query', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'offset', in: 'query', description: 'the `offset` of the previous page', schema: { type: 'string' } },
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
      operationId: `create-${label.id}`,
      tags: label.tag,
      summary: `Create one of ${entity.adminPath}${label.summary}`,
      requestBody: requestBody(`${base}Input`),
      responses: {
        201: { description: 'Created', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
  };
}

/** `GET`, `PUT` (upsert), `PATCH` and `DELETE` of one entity. */
export function entityOperations(entity: OpenApiEntity, placement: EntityPlacement = {}): JsonObject {
  const base = entityComponentName(entity);
  const label = labelOf(entity, placement);
  const missing = placement.parent ? ` (or another ${placement.parent.replace(/_/g, ' ')}'s)` : '';
  return {
    get: {
      operationId: `get-${label.id}`,
      tags: label.tag,
      summary: `Read one of ${entity.adminPath}${label.summary}`,
      responses: { 200: { description: 'Found', ...json(ref(base)) }, 404: notFound },
    },
    put: {
      operationId: `upsert-${label.id}`,
      tags: label.tag,
      summary: `Create or replace one of ${entity.adminPath}${label.summary}`,
      description: 'Omitted fields return to their defaults. Answers 200 whether it created or replaced.',
      requestBody: requestBody(`${base}Input`),
      responses: {
        200: { description: 'Created or replaced', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
    patch: {
      operationId: `update-${label.id}`,
      tags: label.tag,
      summary: `Update fields of one of ${entity.adminPath}${label.summary}`,
      requestBody: requestBody(`${base}Patch`),
      responses: {
        200: { description: 'Updated', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        404: notFound,
        409: error('Unique violation'),
      },
    },
    delete: {
      operationId: `delete-${label.id}`,
      tags: label.tag,
      summary: `Delete one of ${entity.adminPath}${label.summary}`,
      responses: placement.parent
        ? { 204: { description: 'Deleted' }, 404: { ...notFound, description: `Not found${missing}` } }
        : { 204: { description: 'Deleted, or was not there' }, 400: error('Still referenced by another entity') },
    },
  };
}

/** `GET /{children}/{c}/{field}`: the entity a child references through `field`. */
export function entityReferenceOperations(child: OpenApiEntity, field: string, parent: OpenApiEntity): JsonObject {
  return {
    get: {
      operationId: `get-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Read the ${field.replace(/_/g, ' ')} one of ${child.adminPath} belongs to`,
      responses: { 200: { description: 'Found', ...json(ref(entityComponentName(parent))) }, 404: notFound },
    },
    put: {
      operationId: `upsert-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Create or replace the ${field.replace(/_/g, ' ')} of one of ${child.adminPath}`,
      description: 'When it references none, one is created under a new id and referenced.',
      requestBody: requestBody(`${entityComponentName(parent)}Input`),
      responses: { 200: { description: 'Created or replaced', ...json(ref(entityComponentName(parent))) }, 400: error('Schema or foreign key violation'), 404: notFound },
    },
    patch: {
      operationId: `update-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Update the ${field.replace(/_/g, ' ')} of one of ${child.adminPath}`,
      requestBody: requestBody(`${entityComponentName(parent)}Patch`),
      responses: { 200: { description: 'Updated', ...json(ref(entityComponentName(parent))) }, 400: error('Schema or foreign key violation'), 404: notFound },
    },
    delete: {
      operationId: `delete-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Refused (405) when one of ${child.adminPath} references a ${field.replace(/_/g, ' ')}, as Kong`,
      responses: { 204: { description: 'Never answered: the delete is refused' }, 404: notFound, 405: error('Method not allowed') },
    },
  };
}

/** `id_or_key` for an entity with an endpoint key, else `id`. */
export function entityParamName(entity: OpenApiEntity): string {
  return entity.endpointKey ? 'id_or_key' : 'id';
}

export function entityPathParameter(entity: OpenApiEntity, name: string): JsonObject {
  return {
    name,
    in: 'path',
    required: true,
    description: entity.endpointKey ? `the id, or the ${entity.endpointKey} when not a UUID` : 'the id',
    schema: { type: 'string' },
  };
}

/** `Consumer`, `KeySet`, `KeyAuth`: the base name of an entity's components. */
export function entityComponentName(entity: { name: string }): string {
  return componentName(singular(entity.name));
}

/** consumers → consumer, key_sets → key_set; names that do not end in a plain "s" stay as they are. */
export function singular(name: string): string {
  return /[^s]s$/.test(name) ? name.slice(0, -1) : name;
}

/** key-auth → KeyAuth, key_set → KeySet: OpenAPI component names allow only [A-Za-z0-9._-]. */
export function componentName(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}
