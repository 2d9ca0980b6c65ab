import { z } from 'zod';
import { defOf, catchallOf, isOpenRecord, isPlainObject, unwrap, type AnySchema } from './walk';

export interface CoerceOptions {
  /** turn `''` into `null` for every field (Kong's form rule: `config.anonymous=` clears it); default true */
  emptyToNull?: boolean;
}

/**
 * Gives form strings the types the schema expects: "true"/"false" → booleans, numeric strings → numbers, a single
 * value for an array field → a one-element array (never comma-split), `''` → null. Walks objects, records, arrays,
 * tuples and unions (not open records: coerce a plugin with its own config schema). Anything it cannot coerce is
 * left as it is, so validation reports it; already-typed values pass through unchanged (apart from `''` → null).
 * Kong applies these rules to form and multipart bodies and query strings only; a JSON body is validated as sent
 * there (`{"port": "80"}` → "expected an integer").
 */
export function coerceInput(schema: AnySchema, input: unknown, options: CoerceOptions = {}): unknown {
  const emptyToNull = options.emptyToNull ?? true;

  const coerce = (node: AnySchema, value: unknown): unknown => {
    if (value === '' && emptyToNull) return null;
    if (value === undefined || value === null) return value;
    const inner = unwrap(node).schema;
    const def = defOf(inner);
    switch (def.type) {
      case 'boolean':
        return toBoolean(value);
      case 'number':
        return toNumber(value);
      case 'literal':
      case 'enum':
        return toChoice(def.type === 'enum' ? Object.values(def.entries ?? {}) : (def.values ?? []), value);
      case 'array': {
        const element = def.element;
        if (isPlainObject(value) || !element) return value;
        const list = Array.isArray(value) ? value : [value];
        return list.map((item) => coerce(element, item));
      }
      case 'tuple': {
        if (!Array.isArray(value)) return value;
        return value.map((element, i) => {
          const item = def.items?.[i] ?? def.rest;
          return item ? coerce(item, element) : element;
        });
      }
      case 'object': {
        if (!isPlainObject(value)) return value;
        const shape = def.shape ?? {};
        const catchall = catchallOf(def);
        const out: Record<string, unknown> = {};
        for (const [key, fieldValue] of Object.entries(value)) {
          const field = Object.hasOwn(shape, key) ? shape[key] : catchall;
          defineField(out, key, field ? coerce(field, fieldValue) : fieldValue);
        }
        return out;
      }
      case 'record': {
        // an open record (a plugin's config before its schema is known) is left to the schema that knows it
        const valueType = def.valueType;
        if (!isPlainObject(value) || isOpenRecord(inner) || !valueType) return value;
        const out: Record<string, unknown> = {};
        for (const [key, fieldValue] of Object.entries(value)) defineField(out, key, coerce(valueType, fieldValue));
        return out;
      }
      case 'intersection':
        return def.left && def.right ? coerce(def.right, coerce(def.left, value)) : value;
      case 'union': {
        // the first member that accepts the coerced value decides; if none does, the value is left for validation
        for (const option of def.options as AnySchema[]) {
          const candidate = coerce(option, value);
          if (z.safeParse(option, candidate).success) return candidate;
        }
        return value;
      }
      default:
        return value;
    }
  };

  return coerce(schema, input);
}

function defineField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function toBoolean(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

function toNumber(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

function toChoice(choices: unknown[], value: unknown): unknown {
  if (typeof value !== 'string' || choices.includes(value)) return value;
  const asNumber = toNumber(value);
  if (typeof asNumber === 'number' && choices.includes(asNumber)) return asNumber;
  const asBoolean = toBoolean(value);
  if (typeof asBoolean === 'boolean' && choices.includes(asBoolean)) return asBoolean;
  return value;
}
