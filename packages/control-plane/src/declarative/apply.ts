import { DbError, HttpError, validateWith, type FieldErrors } from '@gatehouse/core';
import type { EntityKind } from '../service/entity-kind';
import type { EntityService } from '../service/entity-service';
import type { StoredEntity } from '../store/entity-repository';
import { sql } from 'kysely';
import { asSqlFailure } from '../db/sql-errors';
import { entityError, type DocEntity, type FlatDocument } from './document';
import { DeclarativeError, entityType, errorItems, type FlattenedError } from './errors';
import { diffConfigs, type ConfigDiff, type DiffFamily } from './diff';
import { hasTags, readAll, toDocumentEntity } from './export';
import { nextTurn, runAtOnce, runInSlices, SliceCounter, type Steps } from './slices';
import { previousCredentials, storedById, storedForm } from './stored-form';

/** What is wrong with an error thrown by a kind's checks, as Kong's field errors. */
function fieldErrorsOf(err: unknown): FieldErrors {
  if (err instanceof DbError) return Object.keys(err.fields).length ? err.fields : { '@entity': err.message };
  if (err instanceof HttpError) return { '@entity': err.message };
  throw err;
}

/**
 * The checks that need no database: the kind's pre-checks, its schema (with defaults filled in) and its entity-level
 * check. Used for offline validation and for diffs; a write runs the whole pipeline again (EntityService.buildNew).
 */
export function checkEntity(kind: EntityKind, body: Record<string, unknown>): { entity: Record<string, unknown> } | { errors: FieldErrors } {
  try {
    kind.preValidate?.(body);
    const schema = kind.schemaFor ? kind.schemaFor(body) : kind.def.schema;
    const entity = validateWith(schema, body) as Record<string, unknown>;
    const errors = kind.def.check?.(entity);
    return errors ? { errors } : { entity };
  } catch (err) {
    return { errors: fieldErrorsOf(err) };
  }
}

/** Every error of a flattened document, the schema's included; an empty list means it would load. */
export function validateDocument(flat: FlatDocument): FlattenedError[] {
  return runAtOnce(validateSteps(flat));
}

/** validateDocument in slices (slices.ts), giving the event loop a turn now and then */
export function validateDocumentInSlices(flat: FlatDocument): Promise<FlattenedError[]> {
  return runInSlices(validateSteps(flat));
}

function* validateSteps(flat: FlatDocument): Steps<FlattenedError[]> {
  const slice = new SliceCounter();
  const errors = [...flat.errors];
  for (const kind of flat.kinds) {
    for (const entity of flat.entities.get(kind.def.name)!) {
      if (slice.full()) yield;
      const result = checkEntity(kind, entity.body);
      if ('errors' in result) errors.push(entityError(entity, errorItems(result.errors)));
    }
  }
  return errors;
}

/** What applying the document would change, against the current state (the document must be valid). */
export async function diffDocument(entities: EntityService, flat: FlatDocument, selectTags?: string[]): Promise<ConfigDiff> {
  const current = await readAll(entities, flat.kinds, entities.store.db);
  const families: DiffFamily[] = [];
  const slice = new SliceCounter();
  for (const kind of flat.kinds) {
    const have = new Map<string, Record<string, unknown>>();
    for (const e of current.get(kind.def.name)!) {
      if (slice.full()) await nextTurn();
      if (hasTags(e, selectTags)) have.set(e.id, toDocumentEntity(kind, entities.present(kind, e)));
    }
    const stored = storedById(kind, current);
    const want = new Map<string, Record<string, unknown>>();
    for (const doc of flat.entities.get(kind.def.name)!) {
      if (slice.full()) await nextTurn();
      const result = checkEntity(kind, doc.body);
      const checked = 'entity' in result ? result.entity : doc.body;
      const entity = 'entity' in result ? await storedForm(kind, checked, stored.get(String(doc.body.id)) ?? null, { trx: entities.store.db, transform: flat.transform }) : checked;
      want.set(String(doc.body.id), toDocumentEntity(kind, entities.present(kind, entity as StoredEntity)));
    }
    families.push({ type: kind.def.name, endpointKey: kind.def.endpointKey, current: have, desired: want });
  }
  return diffConfigs(families);
}

/**
 * Replaces the whole configuration (with `selectTags`, the entities carrying all of them) with the document's, in one transaction (one config version, one publication):
 * every family's rows go, then each family in dependency order is built through the same pipeline as an admin write
 * (validation, kind hooks such as hashing and sealing) and inserted in bulk. Entities that keep their id keep their
 * creation time when the document gives none. Any error rolls everything back and is reported per entity.
 * The document is used up: each family's entities are dropped from `flat` once inserted.
 */
export async function applyDocument(entities: EntityService, flat: FlatDocument, selectTags?: string[]): Promise<Map<string, StoredEntity[]>> {
  const upfront = await validateDocumentInSlices(flat);
  if (upfront.length) throw new DeclarativeError(upfront);
  const store = entities.store;
  return store.write(async (trx) => {
    const createdAt = new Map<string, number>();
    for (const kind of flat.kinds) {
      const { rows } = await sql<{ id: string; created_at: string | number }>`select id, created_at from ${sql.table(kind.def.name)}`.execute(trx);
      for (const row of rows) createdAt.set(row.id, Number(row.created_at));
    }
    // credentials applied again keep what their prepare made of them before (a password's hash)
    const previous = await previousCredentials(store, flat.kinds, trx);
    for (const kind of [...flat.kinds].reverse()) await store.repo(kind.def.name).deleteAll(trx, selectTags);

    const written = new Map<string, StoredEntity[]>();
    const errors: FlattenedError[] = [];
    const slice = new SliceCounter();
    for (const kind of flat.kinds) {
      const built: StoredEntity[] = [];
      for (const doc of flat.entities.get(kind.def.name)!) {
        if (slice.full()) await nextTurn();
        const body = { ...doc.body };
        if (body.created_at === undefined && createdAt.has(String(body.id))) body.created_at = createdAt.get(String(body.id));
        try {
          const before = previous.get(String(body.id)) ?? null;
          built.push(await entities.buildNew(trx, kind, { body }, undefined, { trx, previous: before, input: { body }, transform: flat.transform }));
        } catch (err) {
          errors.push(entityError(doc, errorItems(fieldErrorsOf(err))));
        }
      }
      if (errors.length === 0) {
        try {
          await store.repo(kind.def.name).insertMany(trx, built);
          // written: the document's entities of this kind are not needed any more (the publication after the commit
          // needs the room)
          flat.entities.set(kind.def.name, []);
        } catch (err) {
          errors.push(insertError(kind, flat.entities.get(kind.def.name)!, err));
          // the transaction is aborted: nothing more can be read or written in it
          break;
        }
      }
      written.set(kind.def.name, built);
    }
    if (errors.length) throw new DeclarativeError(errors);
    return written;
  });
}

/** a database refusal of a bulk insert (a uniqueness the document check could not see), named as well as it can be */
function insertError(kind: EntityKind, docs: DocEntity[], err: unknown): FlattenedError {
  // what the database refused is the document's fault; anything else (a lost connection) is not
  if (!(err instanceof DbError) && !(err instanceof HttpError) && !asSqlFailure(err)) throw err;
  const fields = err instanceof DbError || err instanceof HttpError ? fieldErrorsOf(err) : {};
  const message = err instanceof Error ? err.message : String(err);
  return { entity_type: entityType(kind.def.name), errors: Object.keys(fields).length ? errorItems(fields) : [{ type: 'entity', message }], entity: docs.length === 1 ? docs[0]!.body : undefined };
}
