import { sql, type RawBuilder } from 'kysely';
import type { EntityDefinition } from '@gatehouse/core';
import { columnOf, tableSpec, type TableSpec } from '../db/entity-tables';
import type { SqlErrorMapper } from '../db/sql-errors';

import type { Db, StoredEntity } from '../db/tables';

export type { StoredEntity };

/** A database handle or an open transaction: repositories work with either. */
export type Executor = Db;

export interface PageQuery {
  size: number;
  /** id of the last entity of the previous page */
  after?: string;
  /** all of these tags (AND) … */
  tagsAll?: string[];
  /** … or any of these (OR) */
  tagsAny?: string[];
  /** equality on foreign ids, e.g. { service: '<uuid>' } */
  foreign?: Record<string, string>;
  /** equality on fields that have a column (unique fields), e.g. { custom_id: 'abc' } */
  equals?: Record<string, string>;
  /** equality on stored fields that have no column, e.g. { is_default: false } */
  jsonEquals?: Record<string, unknown>;
  /** leaves out rows that a row of another table references, e.g. { table: 'admins', column: 'rbac_user_id' } */
  notReferencedBy?: { table: string; column: string };
  /** a condition on the row, written against this entity's table (the caller's read grants: EntityAccess.readable) */
  where?: RawBuilder<boolean>;
}

export interface Page {
  items: StoredEntity[];
  /** id to continue after, when there are more */
  next: string | null;
}

/**
 * Rows of one entity table. Knows the storage layout (jsonb entity + derived columns), nothing about validation.
 * Every database error passes through the error mapper with what was being written.
 */
export class EntityRepository {
  readonly spec: TableSpec;

  constructor(
    readonly def: EntityDefinition,
    private readonly errors: SqlErrorMapper,
  ) {
    this.spec = tableSpec(def);
  }

  private columns(entity: StoredEntity): Record<string, string | number | null | RawBuilder<unknown>> {
    const row: Record<string, string | number | null | RawBuilder<unknown>> = {
      id: entity.id,
      created_at: entity.created_at,
      entity: sql`${JSON.stringify(entity)}::jsonb`,
    };
    for (const column of this.spec.plainColumns) {
      const value = entity[column];
      row[column] = value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
    }
    for (const fk of this.spec.foreign) {
      const ref = entity[fk.field] as { id?: string } | null | undefined;
      row[fk.column] = ref?.id ?? null;
    }
    return row;
  }

  private async guard<T>(work: Promise<T>, operation: 'write' | 'delete', entity?: Record<string, unknown>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      throw this.errors.map(err, { operation, entity });
    }
  }

  async insert(ex: Executor, entity: StoredEntity): Promise<void> {
    await this.guard(ex.insertInto(this.def.name).values(this.columns(entity)).execute(), 'write', entity);
  }

  /** many rows in one statement per chunk (declarative configuration) */
  async insertMany(ex: Executor, entities: StoredEntity[], chunk = 500): Promise<void> {
    for (let i = 0; i < entities.length; i += chunk) {
      const part = entities.slice(i, i + chunk);
      await this.guard(ex.insertInto(this.def.name).values(part.map((e) => this.columns(e))).execute(), 'write', part.length === 1 ? part[0] : undefined);
    }
  }

  /** every row of the table, or those carrying all of `tags` (declarative configuration replaces the configuration) */
  async deleteAll(ex: Executor, tags?: string[]): Promise<void> {
    let query = ex.deleteFrom(this.def.name);
    if (tags?.length) query = query.where(sql<boolean>`entity -> 'tags' ?& array[${sql.join(tags)}]::text[]`);
    await this.guard(query.execute(), 'delete');
  }

  async replace(ex: Executor, entity: StoredEntity): Promise<void> {
    const { id: _id, ...set } = this.columns(entity);
    await this.guard(ex.updateTable(this.def.name).set(set).where('id', '=', entity.id).execute(), 'write', entity);
  }

  /** true when a row was deleted */
  async delete(ex: Executor, id: string): Promise<boolean> {
    const result = await this.guard(ex.deleteFrom(this.def.name).where('id', '=', id).executeTakeFirst(), 'delete');
    return Number(result.numDeletedRows) > 0;
  }

  async findById(ex: Executor, id: string): Promise<StoredEntity | null> {
    const row = await ex.selectFrom(this.def.name).select('entity').where('id', '=', id).executeTakeFirst();
    return row ? row.entity : null;
  }

  /** lookup by a unique field (the endpoint key) or a foreign id, optionally among one parent's children */
  async findByField(ex: Executor, field: string, value: string, foreign?: Record<string, string>): Promise<StoredEntity | null> {
    // Postgres text cannot hold NUL, so no stored value equals one that contains it
    if (value.includes('\u0000')) return null;
    const column = columnOf(this.def, field);
    const hasColumn = column === 'id' || this.spec.plainColumns.includes(column) || this.spec.foreign.some((f) => f.column === column);
    let query = ex.selectFrom(this.def.name).select('entity').limit(1);
    // a key unique only under its parent (a target's host:port in its upstream) is looked up there
    for (const [f, id] of Object.entries(foreign ?? {})) query = query.where(columnOf(this.def, f), '=', id);
    const row = hasColumn
      ? await query.where(column, '=', value).executeTakeFirst()
      : await query.where(sql<string>`entity ->> ${field}`, '=', value).executeTakeFirst();
    return row ? row.entity : null;
  }

  async page(ex: Executor, q: PageQuery): Promise<Page> {
    let query = ex.selectFrom(this.def.name).select(['id', 'entity']).orderBy('id').limit(q.size + 1);
    if (q.after) query = query.where('id', '>', q.after);
    for (const [field, id] of Object.entries(q.foreign ?? {})) query = query.where(columnOf(this.def, field), '=', id);
    for (const [field, value] of Object.entries(q.equals ?? {})) {
      if (!this.spec.plainColumns.includes(field)) throw new Error(`entity ${this.def.name}: no column for filter ${field}`);
      query = value.includes('\u0000') ? query.where(sql<boolean>`false`) : query.where(field, '=', value);
    }
    for (const [field, value] of Object.entries(q.jsonEquals ?? {})) {
      query = query.where(sql<boolean>`entity -> ${field} = ${JSON.stringify(value)}::jsonb`);
    }
    if (q.notReferencedBy) {
      const { table, column } = q.notReferencedBy;
      query = query.where(sql<boolean>`not exists (select 1 from ${sql.table(table)} r where r.${sql.ref(column)} = ${sql.table(this.def.name)}.id)`);
    }
    if (q.where) query = query.where(q.where);
    if (q.tagsAll?.length) query = query.where(sql<boolean>`entity -> 'tags' ?& array[${sql.join(q.tagsAll)}]::text[]`);
    if (q.tagsAny?.length) query = query.where(sql<boolean>`entity -> 'tags' ?| array[${sql.join(q.tagsAny)}]::text[]`);
    const rows = await query.execute();
    const more = rows.length > q.size;
    const items = rows.slice(0, q.size).map((r) => r.entity);
    return { items, next: more ? String(items[items.length - 1]!.id) : null };
  }

  /** every row, ordered by id (snapshot building, cascades); `where` as in PageQuery */
  async all(ex: Executor, foreign?: Record<string, string>, where?: RawBuilder<boolean>): Promise<StoredEntity[]> {
    let query = ex.selectFrom(this.def.name).select('entity').orderBy('id');
    for (const [field, id] of Object.entries(foreign ?? {})) query = query.where(columnOf(this.def, field), '=', id);
    if (where) query = query.where(where);
    return (await query.execute()).map((r) => r.entity);
  }
}
