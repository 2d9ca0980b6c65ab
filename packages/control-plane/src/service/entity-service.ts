import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { coerceInput, Errors, schemaViolation, validateWith } from '@gatehouse/core';
import type { ConfigStore } from '../store/config-store';
import type { Executor, StoredEntity } from '../store/entity-repository';
import type { EntityKind, WriteContext } from './entity-kind';
import { mergeBySchema, orderBySchema } from './merge';
import type { ListQuery } from './paging';
import { encodeOffset } from './paging';
import { checkOverriddenFields, GENERATED_FIELDS } from './overridden-fields';
import { foreignKeysUnresolved, invalidPrimaryKey, isUuid } from './references';

/** Restricts an operation to entities that reference one parent, e.g. `{ field: 'consumer', id }`. */
export interface Scope {
  field: string;
  id: string;
}

export interface WriteInput {
  body: Record<string, unknown>;
  /** the body came as form fields (strings): coerce them by the schema, '' becomes null */
  form?: boolean;
}

export interface ListResult {
  data: Record<string, unknown>[];
  /** opaque offset of the next page, or null on the last page */
  offset: string | null;
}

const now = () => Math.floor(Date.now() / 1000);


function inScope(entity: StoredEntity, scope?: Scope): boolean {
  if (!scope) return true;
  const ref = entity[scope.field] as { id?: string } | null | undefined;
  return ref?.id === scope.id;
}

/**
 * The admin operations on any entity, driven by its EntityDefinition (and the few hooks of its EntityKind):
 * create, read by id or endpoint key, list pages, PATCH (merge, then full validation), PUT (replace or create),
 * delete. Each write is one transaction through the ConfigStore.
 */
export class EntityService {
  private readonly kinds = new Map<string, EntityKind>();

  constructor(readonly store: ConfigStore) {}

  register(kind: EntityKind): EntityKind {
    this.store.register(kind.def);
    this.kinds.set(kind.def.name, kind);
    return kind;
  }

  kind(name: string): EntityKind {
    const kind = this.kinds.get(name);
    if (!kind) throw new Error(`unknown entity '${name}'`);
    return kind;
  }

  allKinds(): EntityKind[] {
    return [...this.kinds.values()];
  }

  present(kind: EntityKind, entity: StoredEntity): Record<string, unknown> {
    const ordered = orderBySchema(this.schemaFor(kind, entity), entity) as StoredEntity;
    return kind.present ? kind.present(ordered) : ordered;
  }

  // ── reads ────────────────────────────────────────────────────────────────

  /** by id when `ref` is a UUID, else by the endpoint key; null when absent or outside the scope */
  async find(kind: EntityKind, ref: string, scope?: Scope, ex: Executor = this.store.db): Promise<StoredEntity | null> {
    const repo = this.store.repo(kind.def.name);
    let entity: StoredEntity | null;
    if (isUuid(ref)) entity = await repo.findById(ex, ref);
    else if (kind.def.endpointKey) {
      const key = kind.normalizeKey ? kind.normalizeKey(ref) : ref;
      if (kind.keyUniqueInScope && !scope) return null;
      entity = await repo.findByField(ex, kind.def.endpointKey, key, scope ? { [scope.field]: scope.id } : undefined);
    } else throw invalidPrimaryKey(ref);
    return entity && inScope(entity, scope) ? entity : null;
  }

  async get(kind: EntityKind, ref: string, scope?: Scope): Promise<Record<string, unknown>> {
    const entity = await this.find(kind, ref, scope);
    if (!entity) throw Errors.notFound();
    return this.presentOne(kind, entity);
  }

  /** `present`, plus what the kind keeps in other tables */
  private async presentOne(kind: EntityKind, entity: StoredEntity): Promise<Record<string, unknown>> {
    const shown = this.present(kind, entity);
    if (kind.expand) await kind.expand([shown], this.store.db);
    return shown;
  }

  async list(kind: EntityKind, q: ListQuery, scope?: Scope, equals?: Record<string, string>): Promise<ListResult> {
    const after = q.after?.[0];
    if (after !== undefined && !isUuid(after)) throw Errors.invalidOffset(encodeOffset(q.after!));
    const page = await this.store.repo(kind.def.name).page(this.store.db, {
      size: q.size,
      after: after as string | undefined,
      tagsAll: q.tagsAll,
      tagsAny: q.tagsAny,
      foreign: scope ? { [scope.field]: scope.id } : undefined,
      equals,
    });
    const data = page.items.map((e) => this.present(kind, e));
    if (kind.expand && data.length > 0) await kind.expand(data, this.store.db);
    return { data, offset: page.next === null ? null : encodeOffset([page.next]) };
  }

  // ── writes (one transaction each) ────────────────────────────────────────

  async create(kind: EntityKind, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    const entity = await this.store.write((trx) => this.createIn(trx, kind, input, scope));
    return this.presentOne(kind, entity);
  }

  /** PATCH: 404 when absent */
  async patch(kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    const entity = await this.store.write(async (trx) => {
      const existing = await this.find(kind, ref, scope, trx);
      if (!existing) throw Errors.notFound();
      return this.patchIn(trx, kind, existing, input, scope);
    });
    return this.presentOne(kind, entity);
  }

  /** PUT: replaces the entity named by `ref` (id or endpoint key), or creates it */
  async upsert(kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    const entity = await this.store.write((trx) => this.upsertIn(trx, kind, ref, input, scope));
    return this.presentOne(kind, entity);
  }

  /** false when there was nothing to delete (no version bump then) */
  async remove(kind: EntityKind, ref: string, scope?: Scope): Promise<boolean> {
    const existing = await this.find(kind, ref, scope);
    if (!existing) return false;
    return this.store.write((trx) => this.deleteIn(trx, kind, existing));
  }

  private async deleteIn(trx: Executor, kind: EntityKind, existing: StoredEntity): Promise<boolean> {
    await kind.beforeDelete?.(existing, trx);
    return this.store.repo(kind.def.name).delete(trx, existing.id);
  }

  // ── the same, inside a caller's transaction (composite writes such as legacy /apis) ──

  async createIn(trx: Executor, kind: EntityKind, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    const ctx: WriteContext = { trx, previous: null };
    const entity = await this.buildNew(trx, kind, input, scope, ctx);
    await this.store.repo(kind.def.name).insert(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return entity;
  }

  /**
   * everything a create does but the insert and the kind's afterWrite: the stored form of a new entity (bulk writes
   * insert many at once; a declarative document gives what afterWrite would derive, such as SNIs, as entities itself)
   */
  async buildNew(trx: Executor, kind: EntityKind, input: WriteInput, scope?: Scope, ctx: WriteContext = { trx, previous: null }): Promise<StoredEntity> {
    const body = await this.readInput(trx, kind, input, null);
    if (scope) body[scope.field] = { id: scope.id };
    const time = now();
    const candidate: Record<string, unknown> = { ...body, id: body.id ?? randomUUID(), created_at: body.created_at ?? time };
    if (kind.def.updatedAt) candidate.updated_at = body.updated_at ?? time;
    return this.validate(kind, candidate, ctx);
  }

  async patchIn(trx: Executor, kind: EntityKind, existing: StoredEntity, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    const body = await this.readInput(trx, kind, input, existing);
    if (scope) body[scope.field] = { id: scope.id };
    const schema = this.schemaFor(kind, { ...existing, ...body });
    // the generated fields keep their stored values, but what the request sends for them must still be valid
    checkOverriddenFields(schema, body, GENERATED_FIELDS);
    const candidate = mergeBySchema(schema, existing, body);
    candidate.id = existing.id;
    candidate.created_at = existing.created_at;
    if (kind.def.updatedAt) candidate.updated_at = now();
    const ctx: WriteContext = { trx, previous: existing };
    const entity = await this.validate(kind, candidate, ctx);
    await this.store.repo(kind.def.name).replace(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return entity;
  }

  async upsertIn(trx: Executor, kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    const byId = isUuid(ref);
    if (!byId && !kind.def.endpointKey) throw invalidPrimaryKey(ref);
    const repo = this.store.repo(kind.def.name);
    const existing = byId ? await repo.findById(trx, ref) : await repo.findByField(trx, kind.def.endpointKey!, ref);
    if (existing && !inScope(existing, scope)) throw Errors.notFound();
    const body = await this.readInput(trx, kind, input, null);
    // the URL (id or endpoint key) and the stored row win over these, but what the body says of them must be valid
    checkOverriddenFields(this.schemaFor(kind, body), body, kind.def.endpointKey ? [...GENERATED_FIELDS, kind.def.endpointKey] : GENERATED_FIELDS);
    if (scope) body[scope.field] = { id: scope.id };
    // the URL names the entity: its id or endpoint key wins over the body
    if (byId) body.id = ref;
    else body[kind.def.endpointKey!] = ref;
    const time = now();
    const candidate: Record<string, unknown> = {
      ...body,
      id: existing?.id ?? body.id ?? randomUUID(),
      created_at: existing?.created_at ?? body.created_at ?? time,
    };
    if (kind.def.updatedAt) candidate.updated_at = time;
    const ctx: WriteContext = { trx, previous: existing };
    const entity = await this.validate(kind, candidate, ctx);
    if (existing) await repo.replace(trx, entity);
    else await repo.insert(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return entity;
  }

  async removeIn(trx: Executor, kind: EntityKind, ref: string, scope?: Scope): Promise<boolean> {
    const existing = await this.find(kind, ref, scope, trx);
    if (!existing) return false;
    return this.deleteIn(trx, kind, existing);
  }

  /** the checks of a create without writing (Kong's POST /schemas/{entity}/validate) */
  async check(kind: EntityKind, input: WriteInput): Promise<void> {
    const body = await this.readInput(this.store.db, kind, input, null);
    const candidate: Record<string, unknown> = { ...body, id: body.id ?? randomUUID(), created_at: body.created_at ?? now() };
    if (kind.def.updatedAt) candidate.updated_at = body.updated_at ?? now();
    kind.preValidate?.(candidate);
    const entity = validateWith(this.schemaFor(kind, candidate), candidate) as Record<string, unknown>;
    const errors = kind.def.check?.(entity);
    if (errors) throw schemaViolation(errors);
    await kind.validate?.(entity, { trx: this.store.db, previous: null });
  }

  // ── the pipeline every write goes through ────────────────────────────────

  private schemaFor(kind: EntityKind, input: Record<string, unknown>): z.ZodObject {
    return kind.schemaFor ? kind.schemaFor(input) : kind.def.schema;
  }

  /** body → coerced (forms), shorthand expanded, foreign references given by name resolved to ids */
  private async readInput(trx: Executor, kind: EntityKind, input: WriteInput, previous: StoredEntity | null): Promise<Record<string, unknown>> {
    let body: Record<string, unknown> = { ...input.body };
    if (input.form) body = coerceInput(this.schemaFor(kind, { ...(previous ?? {}), ...body }), body) as Record<string, unknown>;
    if (kind.def.normalizeInput) body = kind.def.normalizeInput(body);
    for (const fk of kind.def.foreignKeys) {
      const ref = body[fk.field];
      if (!ref || typeof ref !== 'object' || Array.isArray(ref) || 'id' in ref) continue;
      const parent = this.kinds.get(fk.entity);
      const key = parent?.def.endpointKey;
      const given = ref as Record<string, unknown>;
      if (!parent || !key || typeof given[key] !== 'string') continue;
      const found = await this.store.repo(parent.def.name).findByField(trx, key, given[key] as string);
      if (!found) throw foreignKeysUnresolved(fk.field, given, parent.def.name);
      body[fk.field] = { id: found.id };
    }
    return body;
  }

  private async validate(kind: EntityKind, candidate: Record<string, unknown>, ctx: WriteContext): Promise<StoredEntity> {
    kind.preValidate?.(candidate);
    let entity = validateWith(this.schemaFor(kind, candidate), candidate) as Record<string, unknown>;
    const errors = kind.def.check?.(entity);
    if (errors) throw schemaViolation(errors);
    await kind.validate?.(entity, ctx);
    if (kind.prepare) entity = await kind.prepare(entity, ctx);
    return entity as StoredEntity;
  }
}
