import { z } from 'zod';

/**
 * Read-only access to zod 4 schema definitions (`schema._zod.def`), shared by coercion, error rendering and the
 * Kong and OpenAPI exporters, so that each of them sees wrappers (optional, nullable, default, pipe, …) the same way.
 */

export type AnySchema = z.core.$ZodType;
/**
 * A definition object (`schema._zod.def`) as read here: `type` names the kind, and the fields each kind carries are
 * optional (an `optional` has `innerType`, an `object` a `shape`, a check a `check` and maybe a `value`, …).
 */
export interface SchemaDef {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  getter?: () => AnySchema;
  options?: AnySchema[];
  defaultValue?: unknown;
  checks?: AnySchema[];
  check?: string;
  format?: string;
  value?: number | bigint;
  inclusive?: boolean;
  entries?: Record<string, unknown>;
  values?: unknown[];
  shape?: Record<string, AnySchema>;
  catchall?: AnySchema;
  element?: AnySchema;
  keyType?: AnySchema;
  valueType?: AnySchema;
  items?: AnySchema[];
  rest?: AnySchema | null;
  left?: AnySchema;
  right?: AnySchema;
  [field: string]: unknown;
}

export function defOf(schema: AnySchema): SchemaDef {
  // zod's internal definition types are per schema class; SchemaDef is the union of the fields the walk reads
  return schema._zod.def as unknown as SchemaDef;
}

/** What the wrappers around a schema say about the field it describes. */
export interface Unwrapped {
  /** the innermost schema that carries the value's type */
  schema: AnySchema;
  nullable: boolean;
  optional: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  description?: string;
  /** `kong` entries from `.meta({ kong: {...} })` on any layer, outer layers winning */
  kong: Record<string, unknown>;
}

const PASS_THROUGH = new Set(['catch', 'readonly', 'nonoptional', 'promise']);

export function unwrap(schema: AnySchema): Unwrapped {
  const out: Unwrapped = { schema, nullable: false, optional: false, hasDefault: false, defaultValue: undefined, kong: {} };
  let current: AnySchema = schema;
  for (let depth = 0; depth < 64; depth++) {
    readMeta(current, out);
    const def = defOf(current);
    const wrapped = def.innerType;
    if (def.type === 'optional' && wrapped) {
      out.optional = true;
      current = wrapped;
    } else if (def.type === 'nullable' && wrapped) {
      out.nullable = true;
      current = wrapped;
    } else if ((def.type === 'default' || def.type === 'prefault') && wrapped) {
      if (!out.hasDefault) {
        out.hasDefault = true;
        out.defaultValue = def.defaultValue;
      }
      current = wrapped;
    } else if (PASS_THROUGH.has(def.type) && wrapped) {
      current = wrapped;
    } else if (def.type === 'pipe' && def.in) {
      // input decoding and validation messages are about what the client sends: the pipe's input side
      current = def.in;
    } else if (def.type === 'lazy' && def.getter) {
      current = def.getter();
    } else if (def.type === 'union' && isNullableUnion(def)) {
      out.nullable = true;
      current = def.options!.find((o) => defOf(o).type !== 'null')!;
    } else {
      break;
    }
  }
  out.schema = current;
  return out;
}

function isNullableUnion(def: SchemaDef): boolean {
  const options = def.options ?? [];
  return options.length === 2 && options.some((o) => defOf(o).type === 'null');
}

function readMeta(schema: AnySchema, out: Unwrapped): void {
  const meta = z.globalRegistry.get(schema as z.ZodType) as Record<string, unknown> | undefined;
  if (!meta) return;
  if (out.description === undefined && typeof meta.description === 'string') out.description = meta.description;
  if (meta.kong && typeof meta.kong === 'object') out.kong = { ...(meta.kong as Record<string, unknown>), ...out.kong };
}

const INT_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

/** Checks attached to a schema, as their definitions. */
export function checksOf(schema: AnySchema): SchemaDef[] {
  const def = defOf(schema);
  return (def.checks ?? []).map((c) => defOf(c));
}

export function isInteger(schema: AnySchema): boolean {
  const def = defOf(schema);
  if (def.type !== 'number') return false;
  if (def.format && INT_FORMATS.has(def.format)) return true;
  return checksOf(schema).some((c) => c.check === 'number_format' && c.format !== undefined && INT_FORMATS.has(c.format));
}

export interface NumberBounds {
  min?: number;
  minInclusive: boolean;
  max?: number;
  maxInclusive: boolean;
}

/** The explicit range checks of a number schema (the implicit safe-integer range of `.int()` is ignored). */
export function numberBounds(schema: AnySchema): NumberBounds {
  const out: NumberBounds = { minInclusive: true, maxInclusive: true };
  for (const c of checksOf(schema)) {
    if (c.value === undefined) continue;
    if (c.check === 'greater_than' && (out.min === undefined || c.value >= out.min)) {
      out.min = Number(c.value);
      out.minInclusive = Boolean(c.inclusive);
    } else if (c.check === 'less_than' && (out.max === undefined || c.value <= out.max)) {
      out.max = Number(c.value);
      out.maxInclusive = Boolean(c.inclusive);
    }
  }
  return out;
}

/** The string format a schema carries itself (`z.uuid()`) or through a check (`z.string().uuid()`). */
export function stringFormats(schema: AnySchema): SchemaDef[] {
  const def = defOf(schema);
  const own = def.format ? [def] : [];
  return [...own, ...checksOf(schema).filter((c) => c.check === 'string_format')];
}

/** Values of an enum or literal schema, or of a union made only of those; undefined for anything else. */
export function choicesOf(schema: AnySchema): unknown[] | undefined {
  const def = defOf(schema);
  if (def.type === 'enum') return Object.values(def.entries ?? {});
  if (def.type === 'literal') return [...(def.values ?? [])];
  if (def.type === 'union') {
    const all: unknown[] = [];
    for (const option of def.options ?? []) {
      const values = choicesOf(unwrap(option).schema);
      if (!values) return undefined;
      all.push(...values);
    }
    return all;
  }
  return undefined;
}

/** A record whose values can be anything: Kong's open `record` (a plugin's `config` before its schema is known). */
export function isOpenRecord(schema: AnySchema): boolean {
  const def = defOf(schema);
  if (def.type !== 'record' || !def.valueType) return false;
  const valueType = defOf(unwrap(def.valueType).schema).type;
  return valueType === 'unknown' || valueType === 'any';
}

/** The schema found by following `path` (object keys, array indexes, record keys) from `root`, if it can be followed. */
export function schemaAt(root: AnySchema, path: ReadonlyArray<PropertyKey>): AnySchema | undefined {
  let current: AnySchema | undefined = root;
  for (const key of path) {
    if (!current) return undefined;
    const def = defOf(unwrap(current).schema);
    if (def.type === 'object') {
      // own fields only: a client's `toString` or `constructor` is a field name like any other, not Object's method
      const shape = def.shape;
      current = shape && Object.hasOwn(shape, String(key)) ? shape[String(key)] : catchallOf(def);
    } else if (def.type === 'array') {
      current = def.element;
    } else if (def.type === 'record' || def.type === 'map') {
      current = def.valueType;
    } else if (def.type === 'tuple') {
      current = def.items?.[Number(key)] ?? def.rest ?? undefined;
    } else {
      return undefined;
    }
  }
  return current;
}

export function catchallOf(def: SchemaDef): AnySchema | undefined {
  const catchall = def.catchall;
  if (!catchall || defOf(catchall).type === 'never') return undefined;
  return catchall;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
