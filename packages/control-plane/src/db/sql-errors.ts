import { DbError, ErrorCode, Errors, luaTable, schemaViolation, type EntityDefinition, type FieldErrors } from '@gatehouse/core';
import { tableSpec } from './entity-tables';

/**
 * The one place where database errors become Kong errors, by SQLSTATE and constraint name (Postgres and PGlite
 * report the same codes). Anything not listed stays an infrastructure fault (500).
 */
export interface SqlFailure {
  code: string;
  constraint?: string;
  table?: string;
  column?: string;
  message: string;
}

export function asSqlFailure(err: unknown): SqlFailure | null {
  if (!err || typeof err !== 'object') return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return null;
  return err as SqlFailure;
}

interface ConstraintInfo {
  /** the table holding the constraint (an entity's name, or a table of relations such as rbac_role_endpoints) */
  table: string;
  kind: 'unique' | 'foreign' | 'primary';
  fields: string[];
  /** for foreign keys: the referenced entity */
  parent?: string;
  /** for primary keys of relation tables: the key as Kong prints it, from the row written */
  keyOf?: (row: Record<string, unknown>) => Record<string, unknown>;
}

/** What was being done when the error happened. */
export interface SqlErrorContext {
  operation: 'write' | 'delete';
  /** the entity being written */
  entity?: Record<string, unknown>;
}

export class SqlErrorMapper {
  private readonly constraints = new Map<string, ConstraintInfo>();

  constructor(entities: EntityDefinition[]) {
    for (const def of entities) this.add(def);
  }

  add(def: EntityDefinition): void {
    const spec = tableSpec(def);
    for (const u of spec.uniques) this.constraints.set(u.constraint, { table: def.name, kind: 'unique', fields: u.fields });
    for (const fk of spec.foreign) this.constraints.set(fk.constraint, { table: def.name, kind: 'foreign', fields: [fk.field], parent: fk.entity });
  }

  /** the primary key of a table that is not an entity's (a relation), with how Kong prints its key */
  addPrimaryKey(constraint: string, table: string, keyOf: (row: Record<string, unknown>) => Record<string, unknown>): void {
    this.constraints.set(constraint, { table, kind: 'primary', fields: [], keyOf });
  }

  /** a foreign key of a table that is not an entity's, to an entity (`workspace_entities.ws_id` → workspaces) */
  addForeignKey(constraint: string, table: string, field: string, parent: string): void {
    this.constraints.set(constraint, { table, kind: 'foreign', fields: [field], parent });
  }

  map(err: unknown, ctx: SqlErrorContext): unknown {
    if (err instanceof DbError) return err;
    const failure = asSqlFailure(err);
    if (!failure) return err;
    const info = failure.constraint ? this.constraints.get(failure.constraint) : undefined;
    switch (failure.code) {
      case '23505': {
        if (info?.kind === 'primary') return Errors.primaryKey(info.keyOf!(ctx.entity ?? {}));
        if (!info && failure.constraint?.endsWith('_pkey')) return Errors.primaryKey({ id: ctx.entity?.id ?? null });
        if (!info) return err;
        const values: Record<string, unknown> = {};
        for (const field of info.fields) values[field] = ctx.entity?.[field] ?? null;
        return Errors.unique(values);
      }
      case '23001': // ON DELETE RESTRICT (newer servers report it with its own code)
      case '23503': {
        if (!info || !info.parent) return err;
        if (ctx.operation === 'delete') return Errors.referencedBy(info.table, info.parent);
        const field = info.fields[0]!;
        const ref = ctx.entity?.[field];
        const id = ref && typeof ref === 'object' ? (ref as { id?: unknown }).id : ref;
        const message = `the foreign key '${luaTable({ id })}' does not reference an existing '${info.parent}' entity.`;
        return new DbError(ErrorCode.FOREIGN_KEY_VIOLATION, message, { [field]: { id: String(id) } } as FieldErrors);
      }
      case '23502':
        // a NOT NULL column left empty: a required foreign reference the schema let through
        return schemaViolation({ [(failure.column ?? 'entity').replace(/_id$/, '')]: 'required field missing' });
      case '54000':
        // a value too large for a unique index entry
        return schemaViolation({ '@entity': ['a unique field value is too long'] });
      default:
        // data exceptions (22xxx: bad uuid text, out-of-range numbers) are bad input that slipped past the schema
        if (failure.code.startsWith('22')) return schemaViolation({ '@entity': [failure.message] });
        return err;
    }
  }
}
