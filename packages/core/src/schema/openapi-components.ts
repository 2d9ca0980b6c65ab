import { z } from 'zod';
import { defOf } from './walk';

/**
 * The components of the admin API's OpenAPI document, from the same zod schemas that validate requests: `<Name>`
 * (what responses hold), `<Name>Input` (what a create or PUT accepts), `<Name>Patch` (every field optional) per
 * entity, `<Plugin>Config` and `<Plugin>ConfigInput` per plugin, and the names they go by.
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

export type JsonObject = Record<string, unknown>;

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
