import type { FieldErrors } from '../errors';
import { checksOf, defOf, schemaAt, unwrap, type AnySchema } from './walk';

/**
 * Admin input bounds (decision 16), in two steps that every admin write passes:
 * - `structuralViolations(body)`: what no field may hold, whatever its schema: a NUL byte (in a value or a key),
 *   a prototype-pollution key (`__proto__`, `constructor`, `prototype`), nesting deeper than MAX_NESTING, an array
 *   longer than MAX_ARRAY_ITEMS, a string longer than LONG_TEXT_MAX, a key longer than MAX_STRING_LENGTH. The
 *   admin body reader runs it on every decoded body, so nothing hostile reaches a route, RBAC's included.
 * - `boundViolations(schema, input)`: strings bounded by their field: MAX_STRING_LENGTH unless the field's own
 *   schema allows more (`.max(LONG_TEXT_MAX)` on PEM, JWK and certificate text). `checkWith` runs it first, so every
 *   entity and plugin config validated through the schema toolkit gets it.
 * Both answer Kong's `fields` with the offending field named; they stop after a few findings, so a hostile body
 * cannot make the error itself huge.
 */

export const MAX_STRING_LENGTH = 1024;
/** PEM, JWK and certificate text (64 KiB) */
export const LONG_TEXT_MAX = 65536;
export const MAX_ARRAY_ITEMS = 1000;
/** objects and arrays inside objects and arrays: a body is at most this many levels deep (decision 26) */
export const MAX_NESTING = 64;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_FINDINGS = 8;

export interface Finding {
  path: Array<string | number>;
  message: string;
}

/** The generic checks on a decoded body; null when it passes. */
export function structuralViolations(body: unknown): FieldErrors | null {
  const findings: Finding[] = [];
  walkStructure(body, [], 0, findings);
  return findings.length ? findingsToFields(findings) : null;
}

function walkStructure(value: unknown, path: Array<string | number>, depth: number, out: Finding[]): void {
  if (out.length >= MAX_FINDINGS) return;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ path, message: 'must not contain a NUL byte' });
    else if (value.length > LONG_TEXT_MAX) out.push({ path, message: `length must be at most ${LONG_TEXT_MAX}` });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth >= MAX_NESTING) {
    out.push({ path, message: `nested too deeply (at most ${MAX_NESTING} levels)` });
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_ARRAY_ITEMS) {
      out.push({ path, message: `length must be at most ${MAX_ARRAY_ITEMS}` });
      return;
    }
    for (let i = 0; i < value.length && out.length < MAX_FINDINGS; i++) walkStructure(value[i], [...path, i], depth + 1, out);
    return;
  }
  for (const key of Object.keys(value)) {
    if (out.length >= MAX_FINDINGS) return;
    const shown = displayKey(key);
    if (FORBIDDEN_KEYS.has(key)) out.push({ path: [...path, shown], message: 'field name not allowed' });
    else if (key.includes('\u0000')) out.push({ path: [...path, shown], message: 'field name must not contain a NUL byte' });
    else if (key.length > MAX_STRING_LENGTH) out.push({ path: [...path, shown], message: `field name length must be at most ${MAX_STRING_LENGTH}` });
    else walkStructure((value as Record<string, unknown>)[key], [...path, key], depth + 1, out);
  }
}

/** String bounds by field; null when every string is within its field's bound. */
export function boundViolations(schema: AnySchema, input: unknown): FieldErrors | null {
  const findings: Finding[] = [];
  walkBounds(schema, input, [], 0, findings);
  return findings.length ? findingsToFields(findings) : null;
}

function walkBounds(schema: AnySchema | undefined, value: unknown, path: Array<string | number>, depth: number, out: Finding[]): void {
  if (out.length >= MAX_FINDINGS || depth > MAX_NESTING) return;
  if (typeof value === 'string') {
    const limit = stringLimit(schema);
    if (value.length > limit) out.push({ path, message: `length must be at most ${limit}` });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && out.length < MAX_FINDINGS; i++) walkBounds(childSchema(schema, i), value[i], [...path, i], depth + 1, out);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (out.length >= MAX_FINDINGS) return;
    if (key.length > MAX_STRING_LENGTH) {
      out.push({ path: [...path, displayKey(key)], message: `field name length must be at most ${MAX_STRING_LENGTH}` });
      continue;
    }
    walkBounds(childSchema(schema, key), child, [...path, key], depth + 1, out);
  }
}

function childSchema(schema: AnySchema | undefined, key: string | number): AnySchema | undefined {
  return schema ? schemaAt(schema, [key]) : undefined;
}

/** MAX_STRING_LENGTH, or the field's own larger `max` (a string schema, or every string member of a union). */
function stringLimit(schema: AnySchema | undefined): number {
  if (!schema) return MAX_STRING_LENGTH;
  const inner = unwrap(schema).schema;
  const def = defOf(inner);
  if (def.type === 'union') {
    const limits = (def.options as AnySchema[]).map((option) => stringLimit(option));
    return Math.max(MAX_STRING_LENGTH, ...limits);
  }
  let own = 0;
  for (const check of checksOf(inner)) {
    if (check.check === 'max_length' && typeof check.maximum === 'number') own = Math.max(own, check.maximum);
  }
  return Math.max(MAX_STRING_LENGTH, own);
}

function displayKey(key: string): string {
  const clean = key.split('\u0000').join('\\0');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}

/**
 * Kong's nesting: records nest by field name, an array field holds the list of its elements' messages (an element
 * below the array contributes `"sub.field: message"`); a finding at the top of the body goes to `@entity`.
 */
export function findingsToFields(findings: Finding[]): FieldErrors {
  const fields: FieldErrors = {};
  for (const { path, message } of findings) {
    const arrayAt = path.findIndex((segment) => typeof segment === 'number');
    const keys = (arrayAt < 0 ? path : path.slice(0, arrayAt)).map(String);
    const below = arrayAt < 0 ? [] : path.slice(arrayAt + 1).filter((s) => typeof s === 'string');
    const text = below.length ? `${below.join('.')}: ${message}` : message;
    if (keys.length === 0) {
      addMessage(fields, '@entity', text, true);
      continue;
    }
    const target = recordAt(fields, keys.slice(0, -1));
    if (target) addMessage(target, keys[keys.length - 1]!, text, arrayAt >= 0);
  }
  return fields;
}

/** the nested record at `keys`, made where missing; null when a message already sits on the way */
function recordAt(fields: FieldErrors, keys: string[]): FieldErrors | null {
  let target = fields;
  for (const key of keys) {
    const existing = Object.hasOwn(target, key) ? target[key] : undefined;
    if (existing === undefined) define(target, key, {});
    else if (typeof existing === 'string' || Array.isArray(existing)) return null;
    target = target[key] as FieldErrors;
  }
  return target;
}

function addMessage(target: FieldErrors, key: string, message: string, asList: boolean): void {
  const existing = Object.hasOwn(target, key) ? target[key] : undefined;
  if (existing === undefined) define(target, key, asList ? [message] : message);
  else if (Array.isArray(existing)) existing.push(message);
}

/** own-property assignment, so that a reported `__proto__` is an ordinary field of the error body */
function define(target: FieldErrors, key: string, value: FieldErrors[string]): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
