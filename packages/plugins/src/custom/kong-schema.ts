import { z } from 'zod';

/**
 * A `kong-pdk` plugin's `Schema` (Kong's field list: `[{ name: { type, default, required, one_of, elements,
 * fields } }]`) as the zod config record Gatehouse validates with.
 */

type KongField = { type?: string; default?: unknown; required?: boolean; one_of?: unknown[]; elements?: KongField; fields?: KongFieldList; values?: KongField };
type KongFieldList = Array<Record<string, KongField>>;

function fieldSchema(field: KongField): z.ZodType {
  let schema: z.ZodType;
  switch (field.type) {
    case 'string':
      schema = field.one_of ? z.enum(field.one_of.map(String) as [string, ...string[]]) : z.string();
      break;
    case 'number':
      schema = z.number();
      break;
    case 'integer':
      schema = z.number().int();
      break;
    case 'boolean':
      schema = z.boolean();
      break;
    case 'array':
    case 'set':
      schema = z.array(field.elements ? fieldSchema(field.elements) : z.unknown());
      break;
    case 'map':
      schema = z.record(z.string(), field.values ? fieldSchema(field.values) : z.unknown());
      break;
    case 'record':
      schema = recordSchema(field.fields ?? []);
      break;
    default:
      schema = z.unknown();
  }
  if (field.default !== undefined) return schema.default(field.default as never);
  return field.required === true ? schema : schema.nullable().default(null);
}

export function recordSchema(fields: KongFieldList): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const entry of fields) for (const [name, field] of Object.entries(entry)) shape[name] = fieldSchema(field);
  return z.object(shape).strict();
}
