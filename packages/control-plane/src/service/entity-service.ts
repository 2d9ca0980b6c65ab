import { randomUUID } from 'node:crypto';
import { Errors } from '@gatehouse/core';
import type { ConfigStore } from '../store/config-store';
import type { Executor, StoredEntity } from '../store/entity-repository';
import type { CreationHook, EntityKind, WriteContext } from './entity-kind';
import { mergeBySchema, orderBySchema } from './merge';
import type { ListQuery } from './paging';
import { encodeOffset } from './paging';
import { checkOverriddenFields, GENERATED_FIELDS } from './overridden-fields';
import { invalidPrimaryKey, isUuid } from './references';
import type { EntityAccess, EntityAction } from './entity-access';
import { checkCreate, nowSeconds as now, readInput, schemaFor, validateEntity } from './write-pipeline';

/** Restricts an operation to entities that reference one parent, e.g. `{ field: 'consumer', id }`. */
export interface Scope {
  field: string;
  id: string;
}

export interface WriteInput {
  body: Record<string, unknown>;
  /** the body came as form fields (strings): coerce them by the schema, '' becomes null */
  form?: boolean;
  /** what the admin request's middleware learned (its workspace, its caller), for the kinds' hooks */
  locals?: Record<string, unknown>;
  /** filled by the kinds' hooks with fields shown once in the response (WriteContext.reply) */
  reply?: Record<string, unknown>;
  /** the request's caller: the write authorizes the row it replaces or deletes */
  access?: EntityAccess;
}

export interface ListResult {
  data: Record<string, unknown>[];
  /** opaque offset of the next page, or null on the last page */
  offset: string | null;
}

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
  private readonly creationHooks: CreationHook[] = [];

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

  /** the kinds of the configuration (what documents, tags and schemas cover): those outside it are left out */
  allKinds(): EntityKind[] {
    return [...this.kinds.values()].filter((k) => !k.outsideConfiguration);
  }

  /** adds a hook run in the transaction of every POST create (its failure rolls the create back) */
  onCreated(hook: CreationHook): void {
    this.creationHooks.push(hook);
  }

  notFound(kind: EntityKind, ref: string): Error {
    return kind.notFound ? kind.notFound(ref) : Errors.notFound();
  }

  present(kind: EntityKind, entity: StoredEntity): Record<string, unknown> {
    const ordered = orderBySchema(schemaFor(kind, entity), entity) as StoredEntity;
    return kind.present ? kind.present(ordered) : ordered;
  }

  // ── reads ────────────────────────────────────────────────────────────────

  /**
   * by id when `ref` is a UUID, else by the endpoint key; null when absent or outside the scope (404 when hidden);
   * with `access`, an entity found must be readable by the caller (403)
   */
  async find(kind: EntityKind, ref: string, scope?: Scope, ex: Executor = this.store.db, access?: EntityAccess): Promise<StoredEntity | null> {
    return this.held(kind, ref, scope, ex, access, 'read');
  }

  /** `find`, authorizing `action` on the entity found */
  private async held(kind: EntityKind, ref: string, scope: Scope | undefined, ex: Executor, access: EntityAccess | undefined, action: EntityAction): Promise<StoredEntity | null> {
    const entity = await this.lookup(kind, ref, scope, ex);
    if (entity && access) await access.authorize(kind, entity, action, ex);
    return entity;
  }

  private async lookup(kind: EntityKind, ref: string, scope: Scope | undefined, ex: Executor): Promise<StoredEntity | null> {
    const repo = this.store.repo(kind.def.name);
    let entity: StoredEntity | null;
    if (isUuid(ref)) entity = await repo.findById(ex, ref);
    else if (kind.def.endpointKey) {
      const key = kind.normalizeKey ? kind.normalizeKey(ref) : ref;
      if (kind.keyUniqueInScope && !scope) return null;
      entity = await repo.findByField(ex, kind.def.endpointKey, key, scope ? { [scope.field]: scope.id } : undefined);
    } else throw invalidPrimaryKey(ref);
    if (!entity || !inScope(entity, scope)) return null;
    // a row another family serves exists, but not here: Kong's plain 404, whatever the kind says of absent ones
    if (kind.hides && (await kind.hides(entity, ex))) throw Errors.notFound();
    return entity;
  }

  async get(kind: EntityKind, ref: string, scope?: Scope, access?: EntityAccess): Promise<Record<string, unknown>> {
    const entity = await this.find(kind, ref, scope, this.store.db, access);
    if (!entity) throw this.notFound(kind, ref);
    return this.presentOne(kind, entity);
  }

  /** `present`, plus what the kind keeps in other tables */
  private async presentOne(kind: EntityKind, entity: StoredEntity): Promise<Record<string, unknown>> {
    const shown = this.present(kind, entity);
    if (kind.expand) await kind.expand([shown], this.store.db);
    return shown;
  }

  /** a page of the entities the caller may read (with `access`, its grants are part of the page query) */
  async list(kind: EntityKind, q: ListQuery, scope?: Scope, equals?: Record<string, string>, access?: EntityAccess): Promise<ListResult> {
    const after = q.after?.[0];
    if (after !== undefined && !isUuid(after)) throw Errors.invalidOffset(encodeOffset(q.after!));
    const page = await this.store.repo(kind.def.name).page(this.store.db, {
      size: q.size,
      after: after as string | undefined,
      tagsAll: q.tagsAll,
      tagsAny: q.tagsAny,
      foreign: scope ? { [scope.field]: scope.id } : undefined,
      equals,
      where: access?.readable(kind),
      ...kind.listExcludes,
    });
    const data = page.items.map((e) => this.present(kind, e));
    if (kind.expand && data.length > 0) await kind.expand(data, this.store.db);
    return { data, offset: page.next === null ? null : encodeOffset([page.next]) };
  }

  // ── writes (one transaction each) ────────────────────────────────────────

  /** a create; the creation hooks run in its transaction */
  async create(kind: EntityKind, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    const given = { ...input, reply: {} };
    const entity = await this.store.write((trx) => this.createIn(trx, kind, given, scope), {
      versioned: !kind.outsideConfiguration,
      inTransaction: async (trx, created) => {
        for (const hook of this.creationHooks) await hook(trx, kind, created, given);
      },
    });
    return { ...(await this.presentOne(kind, entity)), ...given.reply };
  }

  /** PATCH: 404 when absent */
  async patch(kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    const given = { ...input, reply: {} };
    const entity = await this.store.write(async (trx) => {
      const existing = await this.held(kind, ref, scope, trx, input.access, 'update');
      if (!existing) throw this.notFound(kind, ref);
      return this.patchIn(trx, kind, existing, given, scope);
    }, this.writeOptions(kind));
    return { ...(await this.presentOne(kind, entity)), ...given.reply };
  }

  /** PUT: replaces the entity named by `ref` (id or endpoint key), or creates it */
  async upsert(kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<Record<string, unknown>> {
    return (await this.upsertReporting(kind, ref, input, scope)).entity;
  }

  /** PUT, telling whether it created the entity (families that answer 201 then) */
  async upsertReporting(kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<{ entity: Record<string, unknown>; created: boolean }> {
    const given = { ...input, reply: {} };
    const { entity, created } = await this.store.write((trx) => this.upsertWith(trx, kind, ref, given, scope), this.writeOptions(kind));
    return { entity: { ...(await this.presentOne(kind, entity)), ...given.reply }, created };
  }

  /** false when there was nothing to delete (no version bump then) */
  async remove(kind: EntityKind, ref: string, scope?: Scope, input?: WriteInput): Promise<boolean> {
    const existing = await this.held(kind, ref, scope, this.store.db, input?.access, 'delete');
    if (!existing) return false;
    return this.store.write((trx) => this.deleteIn(trx, kind, existing, input), this.writeOptions(kind));
  }

  /** writes of kinds outside the configuration bump no config version */
  private writeOptions(kind: EntityKind): { versioned: boolean } {
    return { versioned: !kind.outsideConfiguration };
  }

  /** the delete with the kind's hooks around it */
  private async deleteIn(trx: Executor, kind: EntityKind, existing: StoredEntity, input?: WriteInput): Promise<boolean> {
    const ctx: WriteContext = { trx, previous: existing, input };
    await kind.beforeDelete?.(existing, ctx);
    const removed = await this.store.repo(kind.def.name).delete(trx, existing.id);
    if (removed) await kind.afterDelete?.(existing, ctx);
    return removed;
  }

  // ── the same, inside a caller's transaction (composite writes such as legacy /apis) ──

  async createIn(trx: Executor, kind: EntityKind, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    const ctx: WriteContext = { trx, previous: null, input, reply: input.reply };
    const entity = await this.buildNew(trx, kind, input, scope, ctx);
    await this.store.repo(kind.def.name).insert(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return entity;
  }

  /**
   * everything a create does but the insert and the kind's afterWrite: the stored form of a new entity (bulk writes
   * insert many at once; a declarative document gives what afterWrite would derive, such as SNIs, as entities itself)
   */
  async buildNew(trx: Executor, kind: EntityKind, input: WriteInput, scope?: Scope, ctx: WriteContext = { trx, previous: null, input }): Promise<StoredEntity> {
    const body = await this.readInput(trx, kind, input, null);
    if (scope) body[scope.field] = { id: scope.id };
    const time = now();
    const candidate: Record<string, unknown> = { ...body, id: body.id ?? randomUUID(), created_at: body.created_at ?? time };
    if (kind.def.updatedAt) candidate.updated_at = body.updated_at ?? time;
    return validateEntity(kind, candidate, ctx);
  }

  async patchIn(trx: Executor, kind: EntityKind, existing: StoredEntity, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    const body = await this.readInput(trx, kind, input, existing);
    if (scope) body[scope.field] = { id: scope.id };
    const schema = schemaFor(kind, { ...existing, ...body });
    // the generated fields keep their stored values, but what the request sends for them must still be valid
    checkOverriddenFields(schema, body, GENERATED_FIELDS);
    const candidate = mergeBySchema(schema, existing, body);
    candidate.id = existing.id;
    candidate.created_at = existing.created_at;
    if (kind.def.updatedAt) candidate.updated_at = now();
    const ctx: WriteContext = { trx, previous: existing, input, reply: input.reply };
    const entity = await validateEntity(kind, candidate, ctx);
    await this.store.repo(kind.def.name).replace(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return entity;
  }

  async upsertIn(trx: Executor, kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<StoredEntity> {
    return (await this.upsertWith(trx, kind, ref, input, scope)).entity;
  }

  private async upsertWith(trx: Executor, kind: EntityKind, ref: string, input: WriteInput, scope?: Scope): Promise<{ entity: StoredEntity; created: boolean }> {
    const byId = isUuid(ref);
    if (!byId && !kind.def.endpointKey) throw invalidPrimaryKey(ref);
    const repo = this.store.repo(kind.def.name);
    // a key unique only under its parent (a role's name in its workspace) is looked up there
    const foreign = scope && kind.keyUniqueInScope ? { [scope.field]: scope.id } : undefined;
    const existing = byId ? await repo.findById(trx, ref) : await repo.findByField(trx, kind.def.endpointKey!, ref, foreign);
    if (existing && !inScope(existing, scope)) throw this.notFound(kind, ref);
    if (existing && kind.hides && (await kind.hides(existing, trx))) throw Errors.notFound();
    if (existing && input.access) await input.access.authorize(kind, existing, 'update', trx);
    const body = await this.readInput(trx, kind, input, null);
    // the URL (id or endpoint key) and the stored row win over these, but what the body says of them must be valid
    checkOverriddenFields(schemaFor(kind, body), body, kind.def.endpointKey ? [...GENERATED_FIELDS, kind.def.endpointKey] : GENERATED_FIELDS);
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
    const ctx: WriteContext = { trx, previous: existing, input, reply: input.reply };
    const entity = await validateEntity(kind, candidate, ctx);
    if (existing) await repo.replace(trx, entity);
    else await repo.insert(trx, entity);
    await kind.afterWrite?.(entity, ctx);
    return { entity, created: !existing };
  }

  async removeIn(trx: Executor, kind: EntityKind, ref: string, scope?: Scope): Promise<boolean> {
    const existing = await this.find(kind, ref, scope, trx);
    if (!existing) return false;
    return this.deleteIn(trx, kind, existing);
  }

  /** the checks of a create without writing (Kong's POST /schemas/{entity}/validate) */
  async check(kind: EntityKind, input: WriteInput): Promise<void> {
    await checkCreate(await this.readInput(this.store.db, kind, input, null), kind, this.store.db);
  }

  private readInput(trx: Executor, kind: EntityKind, input: WriteInput, previous: StoredEntity | null): Promise<Record<string, unknown>> {
    return readInput(this.store, (name) => this.kinds.get(name), trx, kind, input, previous);
  }
}
