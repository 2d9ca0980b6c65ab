import type { z } from 'zod';
import type { EntityDefinition } from '../entities/definition';
import { pluginSchema } from '../entities/plugins';
import {
  checksOf,
  choicesOf,
  defOf,
  isInteger,
  isOpenRecord,
  numberBounds,
  stringFormats,
  unwrap,
  type AnySchema,
} from './walk';

/**
 * Kong's `/schemas/{entity}` and `/schemas/plugins/{name}` documents, derived from the zod schemas: a `fields` array
 * of one-key objects in declaration order, each with Kong's field attributes (`type`, `required`, `default`,
 * `one_of`, `between`, `len_min`, `elements`, `keys`/`values`, nested `fields`, `reference` for foreign keys).
 * Kong Manager and other Kong tools build their forms from these.
 *
 * Mapping: string → string; number → integer (with `.int()`) or number; boolean; enum and unions of literals →
 * the values' type with `one_of`; array → array (`set` for fields listed in `sets`); z.record → map, or an open
 * `record` when its values are `unknown`; object → record, or `foreign` for a `{id}` reference. `required` is
 * true unless the field accepts null or may be left out without a default. Attributes that have no zod
 * counterpart can be added on any schema with `.meta({ kong: { ... } })`.
 */

export interface KongField {
  type: string;
  [attribute: string]: unknown;
}
export type KongFieldEntry = Record<string, KongField>;
export interface KongSchema {
  fields: KongFieldEntry[];
  entity_checks?: Array<Record<string, unknown>>;
}

export interface KongSchemaOptions {
  /** foreign fields: field name → referenced entity (e.g. `{service: 'services'}`); an `{id}` object not listed
   * here is still a foreign field, referencing the field name + "s" */
  foreign?: Record<string, string>;
  onDelete?: Record<string, 'cascade' | 'restrict'>;
  /** fields unique on their own (`unique: true`) */
  unique?: string[];
  /** generated fields (`auto: true`); default id, created_at, updated_at */
  auto?: string[];
  /** array fields that Kong types as `set`; default `tags` and `protocols` */
  sets?: string[];
  /** Kong's declarative entity checks, passed through (e.g. `[{at_least_one_of: ['custom_id', 'username']}]`) */
  entityChecks?: Array<Record<string, unknown>>;
}

const DEFAULT_AUTO = ['id', 'created_at', 'updated_at'];
const DEFAULT_SETS = ['tags', 'protocols'];

export function kongSchemaOf(schema: z.ZodObject, opts: KongSchemaOptions = {}): KongSchema {
  const auto = new Set(opts.auto ?? DEFAULT_AUTO);
  const unique = new Set(opts.unique ?? []);
  const sets = new Set(opts.sets ?? DEFAULT_SETS);
  const fields: KongFieldEntry[] = [];
  for (const [name, fieldSchema] of Object.entries(schema.shape as Record<string, AnySchema>)) {
    let field: KongField;
    if (auto.has(name)) field = autoField(fieldSchema);
    else if (opts.foreign?.[name] || isForeignRef(fieldSchema)) field = foreignField(name, fieldSchema, opts);
    else field = kongFieldOf(fieldSchema, { set: sets.has(name) });
    if (unique.has(name)) field.unique = true;
    fields.push({ [name]: field });
  }
  const out: KongSchema = { fields };
  if (opts.entityChecks?.length) out.entity_checks = opts.entityChecks;
  return out;
}

/** `kongSchemaOf` with the foreign keys, cascades and unique fields taken from an entity definition. */
export function kongEntitySchemaOf(definition: EntityDefinition, opts: KongSchemaOptions = {}): KongSchema {
  const foreign: Record<string, string> = {};
  const onDelete: Record<string, 'cascade' | 'restrict'> = {};
  for (const fk of definition.foreignKeys) {
    foreign[fk.field] = fk.entity;
    onDelete[fk.field] = fk.onDelete;
  }
  return kongSchemaOf(definition.schema, {
    ...opts,
    foreign: { ...foreign, ...opts.foreign },
    onDelete: { ...onDelete, ...opts.onDelete },
    unique: opts.unique ?? definition.uniques,
  });
}

export interface KongPluginSchemaOptions {
  /** the plugin cannot be scoped to a consumer (Kong's `typedefs.no_consumer`: `eq: null`) */
  noConsumer: boolean;
  noRoute?: boolean;
  noService?: boolean;
  /** the `protocols` field; default the plugin entity's own */
  protocols?: AnySchema;
}

export function kongPluginSchemaOf(configSchema: z.ZodObject, opts: KongPluginSchemaOptions): KongSchema {
  const fields: KongFieldEntry[] = [];
  fields.push({ consumer: { type: 'foreign', reference: 'consumers', ...(opts.noConsumer ? { eq: null } : {}) } });
  if (opts.noRoute) fields.push({ route: { type: 'foreign', reference: 'routes', eq: null } });
  if (opts.noService) fields.push({ service: { type: 'foreign', reference: 'services', eq: null } });
  fields.push({ protocols: kongFieldOf(opts.protocols ?? pluginSchema.shape.protocols, { set: true }) });
  fields.push({ config: { type: 'record', required: true, fields: recordFields(configSchema) } });
  return { fields };
}

/** Kong's description of one field. */
export function kongFieldOf(schema: AnySchema, hints: { set?: boolean; element?: boolean } = {}): KongField {
  const u = unwrap(schema);
  const inner = u.schema;
  const def = defOf(inner);
  const field: KongField = { type: 'string' };
  field.required = hints.element ? true : !u.nullable && !(u.optional && !u.hasDefault);
  if (u.hasDefault && u.defaultValue !== null && u.defaultValue !== undefined) field.default = u.defaultValue;
  if (u.description) field.description = u.description;

  const choices = choicesOf(inner);
  if (choices) {
    field.type = typeOfValues(choices);
    field.one_of = choices;
  } else if (def.type === 'string') {
    describeString(inner, field);
  } else if (def.type === 'number') {
    field.type = isInteger(inner) ? 'integer' : 'number';
    describeNumber(inner, field);
  } else if (def.type === 'boolean') {
    field.type = 'boolean';
  } else if (def.type === 'array') {
    field.type = hints.set ? 'set' : 'array';
    describeLength(inner, field);
    if (def.element) field.elements = kongFieldOf(def.element, { element: true });
  } else if (def.type === 'record' || def.type === 'map') {
    if (isOpenRecord(inner) || !def.keyType || !def.valueType) {
      Object.assign(field, { type: 'record', abstract: true, fields: [] });
      delete field.default;
    } else {
      field.type = 'map';
      field.keys = kongFieldOf(def.keyType, { element: true });
      field.values = kongFieldOf(def.valueType, { element: true });
    }
  } else if (def.type === 'object') {
    field.type = 'record';
    field.fields = recordFields(inner);
  } else if (def.type === 'union') {
    const first = (def.options as AnySchema[]).find((o) => defOf(unwrap(o).schema).type !== 'null');
    if (first) Object.assign(field, { ...kongFieldOf(first, hints), required: field.required, default: field.default });
    if (field.default === undefined) delete field.default;
  } else {
    field.type = 'any';
  }
  Object.assign(field, u.kong);
  return order(field);
}

function recordFields(schema: AnySchema): KongFieldEntry[] {
  const shape = defOf(schema).shape as Record<string, AnySchema>;
  return Object.entries(shape).map(([name, fieldSchema]) => ({ [name]: kongFieldOf(fieldSchema) }));
}

function autoField(schema: AnySchema): KongField {
  const inner = unwrap(schema).schema;
  if (defOf(inner).type === 'number') return { type: 'integer', timestamp: true, auto: true };
  if (stringFormats(inner).some((f) => f.format === 'uuid' || f.format === 'guid')) return { type: 'string', uuid: true, auto: true };
  return { ...kongFieldOf(schema), auto: true };
}

function foreignField(name: string, schema: AnySchema, opts: KongSchemaOptions): KongField {
  const u = unwrap(schema);
  const field: KongField = {
    type: 'foreign',
    required: !u.nullable && !(u.optional && !u.hasDefault),
    reference: opts.foreign?.[name] ?? `${name}s`,
  };
  if (u.nullable) field.default = null;
  if (opts.onDelete?.[name]) field.on_delete = opts.onDelete[name];
  Object.assign(field, u.kong);
  return field;
}

/** An object holding only a UUID `id`: how a reference to another entity is stored. */
function isForeignRef(schema: AnySchema): boolean {
  const inner = unwrap(schema).schema;
  const def = defOf(inner);
  if (def.type !== 'object') return false;
  const shape = def.shape ?? {};
  const keys = Object.keys(shape);
  if (keys.length !== 1 || !shape.id) return false;
  const id = unwrap(shape.id).schema;
  return stringFormats(id).some((f) => f.format === 'uuid' || f.format === 'guid');
}

function describeString(schema: AnySchema, field: KongField): void {
  field.type = 'string';
  describeLength(schema, field);
  for (const format of stringFormats(schema)) {
    if (format.format === 'uuid' || format.format === 'guid') field.uuid = true;
    else if (format.format === 'starts_with') field.starts_with = format.prefix;
  }
}

function describeLength(schema: AnySchema, field: KongField): void {
  for (const check of checksOf(schema)) {
    if (check.check === 'min_length') field.len_min = check.minimum;
    else if (check.check === 'max_length') field.len_max = check.maximum;
    else if (check.check === 'length_equals') field.len_eq = check.length;
  }
}

function describeNumber(schema: AnySchema, field: KongField): void {
  const bounds = numberBounds(schema);
  const integer = field.type === 'integer';
  // Kong has `between` (inclusive) and `gt` (exclusive); an inclusive lower bound on integers is a `gt` one below
  let min = bounds.min;
  let max = bounds.max;
  if (integer && min !== undefined && !bounds.minInclusive) min += 1;
  if (integer && max !== undefined && !bounds.maxInclusive) max -= 1;
  const inclusive = integer || (bounds.minInclusive && bounds.maxInclusive);
  if (min !== undefined && max !== undefined && inclusive) field.between = [min, max];
  else if (bounds.min !== undefined && (!bounds.minInclusive || integer)) field.gt = bounds.minInclusive ? bounds.min - 1 : bounds.min;
}

function typeOfValues(values: unknown[]): string {
  if (values.length > 0 && values.every((v) => typeof v === 'number')) return values.every(Number.isInteger) ? 'integer' : 'number';
  if (values.length > 0 && values.every((v) => typeof v === 'boolean')) return 'boolean';
  return 'string';
}

const LEADING = ['type', 'required', 'default'];

/** `type`, `required` and `default` first, as Kong's own output reads. */
function order(field: KongField): KongField {
  const out: KongField = { type: field.type };
  for (const key of LEADING) if (key in field && key !== 'type') out[key] = field[key];
  for (const [key, value] of Object.entries(field)) if (!LEADING.includes(key)) out[key] = value;
  return out;
}
