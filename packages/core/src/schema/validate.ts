import { z } from 'zod';
import { flattenFieldErrors, schemaViolation, type FieldErrors } from '../errors';
import { boundViolations, structuralViolations } from './input-bounds';
import { choicesOf, defOf, isInteger, isOpenRecord, numberBounds, schemaAt, unwrap, type AnySchema } from './walk';

/**
 * Validation with Kong's error bodies. Messages use Kong's wording (kong/db/schema/init.lua); a message written in
 * the schema itself (`.refine(fn, 'msg')`, `.regex(re, 'msg')`, `{error: ...}`) wins, since zod ranks a schema's
 * own message above the per-parse map used here.
 *
 * Shape of `fields`, as Kong nests it:
 * - one message per field (the first problem found), records nest: `fields.config.anonymous`;
 * - an unknown key in a strict object: `"unknown field"` at that key;
 * - a map field (`z.record`) holds one message for the whole map;
 * - an array field holds either one message for the array itself ("expected an array", "length must be at least 1")
 *   or the list of its elements' messages in element order (`fields.config.key_names = ["bad header name …"]`).
 *   Valid elements are left out, so the list is only index-aligned with the input when the bad elements come first
 *   (Kong pads the gaps with null); an element that is a record contributes `"sub.field: message"` strings;
 * - keys are sorted at every level, `@entity` first, which orders the summary message as Kong orders it.
 */

export type CheckResult<T> = { ok: true; value: T } | { ok: false; fields: FieldErrors };

/** Parses `input`; on failure returns Kong's per-field errors instead of throwing. */
export function checkWith<S extends z.ZodType>(schema: S, input: unknown): CheckResult<z.output<S>> {
  // input bounds first (decision 16): a hostile value is refused before any check looks into it
  const bounds = structuralViolations(input) ?? boundViolations(schema, input);
  if (bounds) return { ok: false, fields: bounds };
  const result = schema.safeParse(input, { error: kongErrorMap(schema) });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, fields: fieldErrorsFromIssues(schema, result.error.issues) };
}

/** Parses `input` and returns the value with defaults filled; throws `schemaViolation(fields)` (code 2) on failure. */
export function validateWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = checkWith(schema, input);
  if (!result.ok) throw schemaViolation(result.fields);
  return result.value;
}

/**
 * Merges field errors from several sources (field validation, entity checks, foreign-key checks): `@entity` lists
 * are joined, records merge, the first message for a field wins; keys come out sorted with `@entity` first.
 */
export function mergeFieldErrors(...parts: Array<FieldErrors | null | undefined>): FieldErrors {
  const merged: FieldErrors = {};
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) {
      const existing = Object.hasOwn(merged, key) ? merged[key] : undefined;
      if (existing === undefined) setField(merged, key, value);
      else if (Array.isArray(existing) && Array.isArray(value)) setField(merged, key, [...existing, ...value]);
      else if (isErrorRecord(existing) && isErrorRecord(value)) setField(merged, key, mergeFieldErrors(existing, value));
    }
  }
  return sortFieldErrors(merged);
}

/** The zod error map producing Kong's messages; `root` lets it look up the field an issue is about. */
export function kongErrorMap(root: AnySchema): z.core.$ZodErrorMap {
  return (issue) => kongMessage(issue, root);
}

/** The fields of zod's issues that Kong's messages are made from (each issue code carries some of them). */
interface IssueFields {
  code?: string;
  path?: PropertyKey[];
  input?: unknown;
  expected?: string;
  origin?: string;
  exact?: boolean;
  minimum?: unknown;
  maximum?: unknown;
  inclusive?: boolean;
  format?: string;
  prefix?: string;
  suffix?: string;
  includes?: string;
  values?: unknown[];
  errors?: z.core.$ZodIssue[][];
  divisor?: unknown;
  issues?: z.core.$ZodIssue[];
}

function kongMessage(issue: z.core.$ZodRawIssue, root: AnySchema): string | undefined {
  const iss: IssueFields = issue;
  // issues inside a union branch carry paths relative to the union, so the field is only known at the top
  const field = iss.path ? schemaAt(root, iss.path) : undefined;
  const inner = field ? unwrap(field).schema : undefined;
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined || iss.input === null) return 'required field missing';
      return typeMessage(inner, String(iss.expected));
    case 'too_small':
    case 'too_big':
      if (iss.origin === 'number' || iss.origin === 'bigint') return rangeMessage(inner, iss);
      if (iss.exact) return `length must be ${String(iss.minimum ?? iss.maximum)}`;
      return iss.code === 'too_small' ? `length must be at least ${String(iss.minimum)}` : `length must be at most ${String(iss.maximum)}`;
    case 'invalid_format':
      return formatMessage(iss);
    case 'invalid_value': {
      // Kong checks the type before `one_of`; zod's enums skip straight to the values
      const values = iss.values ?? [];
      if (iss.input === undefined || iss.input === null) return 'required field missing';
      if (values.length > 0 && !values.some((v) => typeof v === typeof iss.input)) return typeMessage(inner, typeof values[0]);
      return choiceMessage(values);
    }
    case 'invalid_union':
      return unionMessage(iss.errors ?? [], inner, iss.input);
    case 'unrecognized_keys':
      return 'unknown field';
    case 'not_multiple_of':
      return `value must be a multiple of ${String(iss.divisor)}`;
    case 'invalid_key':
    case 'invalid_element':
      return iss.issues?.[0]?.message ?? `invalid value: ${show(iss.input)}`;
    case 'custom':
      return `failed validating: ${show(iss.input)}`;
    default:
      return undefined;
  }
}

const TYPE_MESSAGES: Record<string, string> = {
  string: 'expected a string',
  integer: 'expected an integer',
  int: 'expected an integer',
  number: 'expected a number',
  boolean: 'expected a boolean',
  array: 'expected an array',
  tuple: 'expected an array',
  set: 'expected a set',
  object: 'expected a record',
  record: 'expected a map',
  map: 'expected a map',
};

function typeMessage(field: AnySchema | undefined, expected: string): string {
  if (field) {
    const def = defOf(field);
    if (def.type === 'number') return TYPE_MESSAGES[isInteger(field) ? 'integer' : 'number'];
    if (def.type === 'record' && isOpenRecord(field)) return TYPE_MESSAGES.object;
    const choices = choicesOf(field);
    if (choices && choices.length > 0) {
      const first = choices[0];
      if (typeof first === 'number') return TYPE_MESSAGES[choices.every(Number.isInteger) ? 'integer' : 'number'];
      if (typeof first === 'boolean') return TYPE_MESSAGES.boolean;
      return TYPE_MESSAGES.string;
    }
    if (TYPE_MESSAGES[def.type]) return TYPE_MESSAGES[def.type];
  }
  return TYPE_MESSAGES[expected] ?? `expected ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
}

function rangeMessage(field: AnySchema | undefined, iss: IssueFields): string {
  const bounds = field && defOf(field).type === 'number' ? numberBounds(field) : undefined;
  const min = bounds?.min ?? (iss.code === 'too_small' ? Number(iss.minimum) : undefined);
  const max = bounds?.max ?? (iss.code === 'too_big' ? Number(iss.maximum) : undefined);
  const minInclusive = bounds?.min !== undefined ? bounds.minInclusive : iss.inclusive !== false;
  const maxInclusive = bounds?.max !== undefined ? bounds.maxInclusive : iss.inclusive !== false;
  if (min !== undefined && max !== undefined && minInclusive && maxInclusive) return `value should be between ${min} and ${max}`;
  if (iss.code === 'too_small' && min !== undefined) return minInclusive ? `value must be at least ${min}` : `value must be greater than ${min}`;
  if (max !== undefined) return maxInclusive ? `value must be at most ${max}` : `value must be less than ${max}`;
  return `value must be at least ${min}`;
}

function formatMessage(iss: IssueFields): string {
  switch (iss.format) {
    case 'uuid':
    case 'guid':
      return 'expected a valid UUID';
    case 'starts_with':
      return `should start with: ${iss.prefix}`;
    case 'ends_with':
      return `should end with: ${iss.suffix}`;
    case 'includes':
      return `expected to contain: ${iss.includes}`;
    default:
      return `invalid value: ${show(iss.input)}`;
  }
}

function choiceMessage(values: unknown[]): string {
  if (values.length === 1) return `value must be ${show(values[0])}`;
  return `expected one of: ${values.map(show).join(', ')}`;
}

function unionMessage(branches: z.core.$ZodIssue[][], field: AnySchema | undefined, input: unknown): string {
  const choices = field ? choicesOf(field) : undefined;
  const onlyChoices = branches.length > 0 && branches.every((b) => b.length === 1 && b[0].code === 'invalid_value' && b[0].path.length === 0);
  if (choices && choices.length > 0 && onlyChoices && !choices.some((c) => typeof c === typeof input)) return typeMessage(field, typeof choices[0]);
  if (choices && onlyChoices) return `expected one of: ${choices.map(show).join(', ')}`;
  if (onlyChoices) return `expected one of: ${branches.flatMap((b) => (b[0] as IssueFields).values ?? []).map(show).join(', ')}`;
  return branches[0]?.[0]?.message ?? 'invalid value';
}

function show(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value) ?? String(value);
  return String(value);
}

type Entry = { path: PropertyKey[]; message: string };

/** Turns zod issues into Kong's nested `fields`. */
export function fieldErrorsFromIssues(schema: AnySchema, issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const entries: Entry[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) entries.push({ path: [...issue.path, key], message: 'unknown field' });
    } else {
      entries.push({ path: [...issue.path], message: issue.message });
    }
  }
  const rendered = render(schema, entries);
  if (typeof rendered === 'string') return { '@entity': [rendered] };
  if (Array.isArray(rendered)) return { '@entity': rendered };
  return rendered;
}

function render(schema: AnySchema | undefined, entries: Entry[]): string | string[] | FieldErrors {
  const here = entries.find((e) => e.path.length === 0);
  if (here) return here.message;
  const def = schema ? defOf(unwrap(schema).schema) : undefined;

  if (def && (def.type === 'record' || def.type === 'map')) return entries[0].message;

  const groups = new Map<PropertyKey, Entry[]>();
  for (const entry of entries) {
    const [head, ...rest] = entry.path;
    const group = groups.get(head) ?? [];
    group.push({ path: rest, message: entry.message });
    groups.set(head, group);
  }

  if (def && (def.type === 'array' || def.type === 'tuple' || def.type === 'set')) {
    const messages: string[] = [];
    const indexes = [...groups.keys()].sort((a, b) => Number(a) - Number(b));
    for (const index of indexes) {
      const element = schemaAt(schema as AnySchema, [index]);
      const sub = render(element, groups.get(index) as Entry[]);
      if (typeof sub === 'string') messages.push(sub);
      else if (Array.isArray(sub)) messages.push(...sub);
      else messages.push(...flattenFieldErrors(sub));
    }
    return messages;
  }

  const out: FieldErrors = {};
  for (const [key, group] of groups) {
    const child = schema ? schemaAt(schema, [key]) : undefined;
    setField(out, String(key), render(child, group));
  }
  return sortFieldErrors(out);
}

function isErrorRecord(value: unknown): value is FieldErrors {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sortFieldErrors(fields: FieldErrors): FieldErrors {
  const keys = Object.keys(fields).sort((a, b) => (a === '@entity' ? -1 : b === '@entity' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  const out: FieldErrors = {};
  for (const key of keys) setField(out, key, fields[key]);
  return out;
}

/** Own-property assignment, so that a client-chosen key such as `__proto__` stays an ordinary field. */
function setField(target: FieldErrors, key: string, value: FieldErrors[string]): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
