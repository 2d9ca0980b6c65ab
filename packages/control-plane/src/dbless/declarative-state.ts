import { createHash } from 'node:crypto';
import { stringify as toYaml } from 'yaml';
import { canonicalJson, DbError, HttpError, schemaViolation, type FieldErrors } from '@gatehouse/core';
import type { EntityKind, WriteContext } from '../service/entity-kind';
import type { Executor, StoredEntity } from '../store/entity-repository';
import { checkEntity } from '../declarative/apply';
import { entityError, flattenSteps, type FlatDocument } from '../declarative/document';
import { DeclarativeError, errorItems, type FlattenedError } from '../declarative/errors';
import { FORMAT_VERSION } from '../declarative/document';
import { toDocumentEntity } from '../declarative/export';
import { nextTurn, runInSlices, SliceCounter } from '../declarative/slices';
import { validateDocumentInSlices } from '../declarative/apply';

/**
 * The whole configuration of a node without a database (Kong's `database = off`): every entity of a declarative
 * document, validated and prepared as an admin write would (passwords hashed, keys generated), held in memory with
 * indexes by id and endpoint key. Immutable: a new document makes a new state.
 */
export interface DeclarativeState {
  kinds: EntityKind[];
  /** entities per kind name, ordered by id */
  entities: Map<string, StoredEntity[]>;
  byId: Map<string, Map<string, StoredEntity>>;
  /** the document's hash (Kong's configuration hash, compared by `POST /config?check_hash=1`) */
  hash: string;
}

/** Kong's configuration hash when nothing is loaded */
export const EMPTY_DOCUMENT_HASH = '00000000000000000000000000000000';

/** A document's hash: md5 of its canonical JSON, so the same document pushed again (in any layout) is recognised. */
export function documentHash(doc: Record<string, unknown>): string {
  return createHash('md5').update(canonicalJson(doc)).digest('hex');
}

/** An empty state (a node without a database started with no file). */
export function emptyState(kinds: EntityKind[]): DeclarativeState {
  return { kinds, entities: new Map(kinds.map((k) => [k.def.name, []])), byId: new Map(kinds.map((k) => [k.def.name, new Map()])), hash: EMPTY_DOCUMENT_HASH };
}

/** sealing is for what a database keeps at rest: in memory, keys and certificates stay as the document gives them */
const KEPT_IN_CLEAR = new Set(['keys', 'certificates']);

/** hooks that would read the database are a mistake here: say so instead of failing obscurely */
const noDatabase = new Proxy(
  {},
  {
    get() {
      throw new Error('no database: the configuration lives in memory');
    },
  },
) as Executor;

function fieldErrorsOf(err: unknown): FieldErrors {
  if (err instanceof DbError) return Object.keys(err.fields).length ? err.fields : { '@entity': err.message };
  if (err instanceof HttpError) return { '@entity': err.message };
  throw err;
}

/** One entity as an admin create would store it: schema defaults, times, the kind's checks and its prepare hook. */
async function buildEntity(kind: EntityKind, body: Record<string, unknown>, now: number, transform: boolean): Promise<StoredEntity> {
  const candidate: Record<string, unknown> = { ...body, created_at: body.created_at ?? now };
  if (kind.def.updatedAt) candidate.updated_at = body.updated_at ?? now;
  const checked = checkEntity(kind, candidate);
  if ('errors' in checked) throw schemaViolation(checked.errors);
  const ctx: WriteContext = { trx: noDatabase, previous: null, transform };
  await kind.validate?.(checked.entity, ctx);
  const prepared = kind.prepare && !KEPT_IN_CLEAR.has(kind.def.name) ? await kind.prepare(checked.entity, ctx) : checked.entity;
  return prepared as StoredEntity;
}

/** Parses, validates and builds a document's entities; throws a DeclarativeError (Kong's 400 body) when it does not load. */
export async function loadDeclarative(doc: Record<string, unknown>, kinds: EntityKind[]): Promise<DeclarativeState> {
  const hash = documentHash(doc);
  const flat: FlatDocument = await runInSlices(flattenSteps(doc, kinds));
  const upfront = await validateDocumentInSlices(flat);
  if (upfront.length) throw new DeclarativeError(upfront);
  const now = Math.floor(Date.now() / 1000);
  const errors: FlattenedError[] = [];
  const entities = new Map<string, StoredEntity[]>();
  const byId = new Map<string, Map<string, StoredEntity>>();
  const slice = new SliceCounter();
  for (const kind of flat.kinds) {
    const built: StoredEntity[] = [];
    for (const entity of flat.entities.get(kind.def.name)!) {
      if (slice.full()) await nextTurn();
      try {
        built.push(await buildEntity(kind, entity.body, now, flat.transform));
      } catch (err) {
        errors.push(entityError(entity, errorItems(fieldErrorsOf(err))));
      }
    }
    built.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    entities.set(kind.def.name, built);
    byId.set(kind.def.name, new Map(built.map((e) => [e.id, e])));
  }
  if (errors.length) throw new DeclarativeError(errors);
  return { kinds: flat.kinds, entities, byId, hash };
}

/** The state as a Kong 3.0 document (what `GET /config` serves as YAML text in Kong's DB-less mode). */
export function stateDocument(state: DeclarativeState, present: (kind: EntityKind, e: StoredEntity) => Record<string, unknown>): Record<string, unknown> {
  const document: Record<string, unknown> = { _format_version: FORMAT_VERSION, _transform: false };
  for (const kind of state.kinds) {
    const list = state.entities.get(kind.def.name) ?? [];
    if (list.length) document[kind.def.name] = list.map((e) => toDocumentEntity(kind, present(kind, e)));
  }
  return document;
}

export function stateYaml(document: Record<string, unknown>): string {
  return toYaml(document, { lineWidth: 0 });
}
