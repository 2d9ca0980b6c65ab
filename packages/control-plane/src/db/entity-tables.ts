import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { EntityDefinition, ForeignKey } from '@gatehouse/core';

/**
 * How an entity is stored: one table named after the entity, the full entity in `entity` (jsonb), and real columns
 * for what the database must enforce: the id, unique fields and foreign ids (with their UNIQUE and FOREIGN KEY
 * constraints). Columns are derived from the entity, never edited on their own.
 */
export interface ForeignColumn extends ForeignKey {
  column: string;
  constraint: string;
}

export interface UniqueIndex {
  /** entity fields, in definition order */
  fields: string[];
  columns: string[];
  constraint: string;
}

export interface TableSpec {
  table: string;
  /** plain (non-foreign) fields that have a column: unique fields and plain parts of composite uniques */
  plainColumns: string[];
  foreign: ForeignColumn[];
  uniques: UniqueIndex[];
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Postgres truncates identifiers at 63 bytes; long generated names get a stable hash suffix instead. */
function constraintName(parts: string[]): string {
  const name = parts.join('_');
  if (name.length <= 63) return name;
  return `${name.slice(0, 50)}_${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

export function columnOf(def: EntityDefinition, field: string): string {
  return def.foreignKeys.some((fk) => fk.field === field) ? `${field}_id` : field;
}

export function tableSpec(def: EntityDefinition): TableSpec {
  const table = def.name;
  const foreign = def.foreignKeys.map((fk) => ({ ...fk, column: `${fk.field}_id`, constraint: constraintName(['fk', table, fk.field]) }));
  const isForeign = (field: string) => foreign.some((fk) => fk.field === field);
  const plain = new Set<string>();
  for (const field of def.uniques) plain.add(field);
  for (const group of def.compositeUniques ?? []) for (const field of group) if (!isForeign(field)) plain.add(field);
  const uniques: UniqueIndex[] = [
    ...def.uniques.map((field) => ({ fields: [field], columns: [columnOf(def, field)], constraint: constraintName(['uq', table, field]) })),
    ...(def.compositeUniques ?? []).map((fields) => ({
      fields,
      columns: fields.map((f) => columnOf(def, f)),
      constraint: constraintName(['uq', table, ...fields]),
    })),
  ];
  return { table, plainColumns: [...plain], foreign, uniques };
}

/**
 * Creates the table of one entity, and first the tables it references when they are missing (so generated
 * migrations may run in any order). Idempotent.
 */
export async function createEntityTable(db: Kysely<unknown>, def: EntityDefinition, known: Map<string, EntityDefinition>): Promise<void> {
  const spec = tableSpec(def);
  for (const fk of spec.foreign) {
    const parent = known.get(fk.entity);
    if (!parent) throw new Error(`entity ${def.name}: foreign key ${fk.field} references unknown entity ${fk.entity}`);
    if (parent !== def) await createEntityTable(db, parent, known);
  }
  let builder = db.schema
    .createTable(spec.table)
    .ifNotExists()
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('entity', 'jsonb', (c) => c.notNull());
  for (const column of spec.plainColumns) builder = builder.addColumn(column, 'text');
  for (const fk of spec.foreign) {
    const parent = known.get(fk.entity)!;
    builder = builder
      .addColumn(fk.column, 'uuid', (c) => (fk.required ? c.notNull() : c))
      .addForeignKeyConstraint(fk.constraint, [fk.column], parent.name, ['id'], (c) => c.onDelete(fk.onDelete));
  }
  await builder.execute();

  for (const fk of spec.foreign) {
    await db.schema.createIndex(constraintName(['ix', spec.table, fk.field])).ifNotExists().on(spec.table).column(fk.column).execute();
  }
  // NULLs count as equal in composite uniques (one plugin per name and scope), hence the COALESCE expressions.
  for (const index of spec.uniques) {
    const parts = index.columns.map((column, i) => {
      const field = index.fields[i]!;
      const fk = spec.foreign.find((f) => f.field === field);
      if (index.columns.length > 1 && fk && !fk.required) return sql`coalesce(${sql.ref(column)}, ${sql.lit(NIL_UUID)}::uuid)`;
      if (index.columns.length > 1 && !fk) return sql`coalesce(${sql.ref(column)}, '')`;
      return sql.ref(column);
    });
    await sql`create unique index if not exists ${sql.id(index.constraint)} on ${sql.table(spec.table)} (${sql.join(parts)})`.execute(db);
  }
  await sql`create index if not exists ${sql.id(constraintName(['ix', spec.table, 'tags']))} on ${sql.table(spec.table)} using gin ((entity -> 'tags'))`.execute(db);
}
