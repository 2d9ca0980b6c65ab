import type { z } from 'zod';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** the object schema under optional/nullable/default wrappers, or null when the field is not a record */
function objectSchemaOf(schema: z.ZodType | undefined): z.ZodObject | null {
  let current: z.core.$ZodType | undefined = schema;
  for (let depth = 0; current && depth < 10; depth++) {
    const def: z.core.$ZodTypeDef | undefined = current._zod?.def;
    if (!def) return null;
    if (def.type === 'object') return current as z.ZodObject;
    if ('innerType' in def) current = def.innerType as z.core.$ZodType;
    else if (def.type === 'pipe') current = (def as z.core.$ZodPipeDef).in;
    else return null;
  }
  return null;
}

/**
 * PATCH semantics (Kong's merge_values): fields that are records in the schema (a plugin's `config`, a key's `pem`)
 * merge field by field at every depth; foreign references, maps, arrays, scalars and null replace. Foreign
 * references are records of one field, so replacing equals merging for them.
 */
export function mergeBySchema(schema: z.ZodObject, base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  const shape = schema.shape as Record<string, z.ZodType>;
  for (const [key, value] of Object.entries(patch)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const nested = Object.hasOwn(shape, key) ? objectSchemaOf(shape[key]) : undefined;
    out[key] = nested && isRecord(current) && isRecord(value) ? mergeBySchema(nested, current, value) : value;
  }
  return out;
}

/**
 * The value with its keys in schema order at every record level (jsonb stores keys in its own order), so an entity
 * reads back exactly as it was returned when written. Keys the schema does not know keep their place at the end.
 */
export function orderBySchema(schema: z.ZodObject, value: Record<string, unknown>): Record<string, unknown> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    if (!Object.hasOwn(value, key)) continue;
    const nested = objectSchemaOf(shape[key]);
    const field = value[key];
    out[key] = nested && isRecord(field) ? orderBySchema(nested, field) : field;
  }
  for (const key of Object.keys(value)) if (!Object.hasOwn(out, key)) out[key] = value[key];
  return out;
}
