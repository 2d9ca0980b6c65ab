import { DbError, ErrorCode, type FieldErrors } from '@gatehouse/core';

/** One error of one entity in Kong's flattened form. */
export interface EntityErrorItem {
  type: 'field' | 'entity';
  field?: string;
  message: string;
}

/** Kong's `flattened_errors` entry: which entity, and what is wrong with it. */
export interface FlattenedError {
  entity_type: string;
  entity_id?: string;
  entity_name?: string;
  entity_tags?: string[];
  entity?: Record<string, unknown>;
  errors: EntityErrorItem[];
}

const SINGULAR: Record<string, string> = { key_sets: 'key_set', ca_certificates: 'ca_certificate', acls: 'acl', snis: 'sni' };

/** Kong names entity types in the singular in flattened errors (`service`, `keyauth_credential`). */
export function entityType(kindName: string): string {
  return SINGULAR[kindName] ?? kindName.replace(/s$/, '');
}

/** Field errors as a list: nested records joined with dots, `@entity` checks as entity-level errors. */
export function errorItems(fields: FieldErrors, prefix = ''): EntityErrorItem[] {
  const out: EntityErrorItem[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (key === '@entity') {
      for (const message of Array.isArray(value) ? value : [String(value)]) out.push({ type: 'entity', message: String(message) });
      continue;
    }
    const field = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.push({ type: 'field', field, message: value });
    else if (Array.isArray(value)) for (const message of value) out.push({ type: 'field', field, message: String(message) });
    else out.push(...errorItems(value, field));
  }
  return out;
}

/**
 * A document that does not load: 400 with Kong's `invalid declarative configuration` body. `fields` nests the errors
 * by entity type and position; `flattened_errors` (asked for with `?flatten_errors=1`) lists them per entity.
 */
export class DeclarativeError extends DbError {
  constructor(
    readonly flattened: FlattenedError[],
    readonly withFlattened = false,
  ) {
    const first = flattened[0];
    const summary = first
      ? `${first.entity_type}${first.entity_name ? ` '${first.entity_name}'` : first.entity_id ? ` ${first.entity_id}` : ''}: ${first.errors
          .map((e) => (e.field ? `${e.field}: ${e.message}` : e.message))
          .join('; ')}${flattened.length > 1 ? ` (and ${flattened.length - 1} more)` : ''}`
      : 'empty';
    super(ErrorCode.DECLARATIVE_CONFIG, `declarative config is invalid: ${summary}`, nestFields(flattened));
  }

  flattenedToo(): DeclarativeError {
    return new DeclarativeError(this.flattened, true);
  }

  override toBody() {
    const body: ReturnType<DbError['toBody']> & { flattened_errors?: FlattenedError[] } = super.toBody();
    if (this.withFlattened) body.flattened_errors = this.flattened;
    return body;
  }
}

function nestFields(flattened: FlattenedError[]): FieldErrors {
  const out: FieldErrors = {};
  for (const entry of flattened) {
    const byType = (own(out, entry.entity_type) ?? put(out, entry.entity_type, {})) as FieldErrors;
    const key = entry.entity_name ?? entry.entity_id ?? String(Object.keys(byType).length);
    const fields = (own(byType, key) ?? put(byType, key, {})) as FieldErrors;
    for (const item of entry.errors) {
      const name = item.field ?? '@entity';
      const existing = own(fields, name);
      put(fields, name, existing === undefined ? item.message : [...(Array.isArray(existing) ? existing : [String(existing)]), item.message]);
    }
  }
  return out;
}

/** field names are the client's (`valueOf`, `__proto__`): only own members are read, and written as own members */
function own(target: FieldErrors, key: string): FieldErrors[string] | undefined {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

function put(target: FieldErrors, key: string, value: FieldErrors[string]): FieldErrors[string] {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}
