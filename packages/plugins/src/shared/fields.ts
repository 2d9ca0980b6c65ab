import type { Fields } from './transform-ops';

/** Query or form arguments as operation fields: each name holds its list of values, order of names kept. */
export function paramFields(params: URLSearchParams): Fields<string[]> {
  return {
    has: (name) => params.has(name),
    get: (name) => (params.has(name) ? params.getAll(name) : undefined),
    set: (name, values) => {
      params.delete(name);
      for (const value of values) params.append(name, value);
    },
    delete: (name) => params.delete(name),
  };
}

/** A JSON object's own members as operation fields. */
export function jsonFields(object: Record<string, unknown>): Fields<unknown> {
  return {
    has: (name) => Object.prototype.hasOwnProperty.call(object, name),
    get: (name) => (Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined),
    set: (name, value) => {
      object[name] = value;
    },
    delete: (name) => {
      delete object[name];
    },
  };
}

export const asList = (text: string): string[] => [text];
export const appendToList = (existing: string[] | undefined, text: string): string[] => (existing === undefined ? [text] : [...existing, text]);

/**
 * JSON append as Kong's transformers do it: an array grows, a string becomes an array of both, and anything else (a
 * missing member, null, a number, a boolean) gives a one-element array of the new value. An object is kept as the
 * first element (Kong would insert into it as a Lua table; JSON has no such value).
 */
export function appendToJson(existing: unknown, value: unknown): unknown {
  if (Array.isArray(existing)) return [...(existing as unknown[]), value];
  if (typeof existing === 'string' || isJsonObject(existing)) return [existing, value];
  return [value];
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** application/json and the `+json` types */
export function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}
