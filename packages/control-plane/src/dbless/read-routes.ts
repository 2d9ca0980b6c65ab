import type { Request, Response } from 'express';
import { DbError, ErrorCode, Errors } from '@gatehouse/core';
import { param, sendList } from '../http/context';
import type { ResourceRegistry } from '../http/resources';
import type { EntityKind } from '../service/entity-kind';
import { orderBySchema } from '../service/merge';
import { encodeOffset, parseListQuery, type ListQuery } from '../service/paging';
import { invalidPrimaryKey, isUuid } from '../service/references';
import type { StoredEntity } from '../store/entity-repository';
import type { DeclarativeState } from './declarative-state';

/** Kong's refusal of a write without a database: 405, code 12, and no `fields` */
export class OperationUnsupported extends DbError {
  constructor(operation: 'create' | 'update' | 'create or update' | 'remove', entity: string) {
    super(ErrorCode.OPERATION_UNSUPPORTED, `cannot ${operation} '${entity}' entities when not using a database`);
  }

  override toBody() {
    return { code: this.code, name: this.errorName, message: this.message };
  }
}

const refuse = (operation: ConstructorParameters<typeof OperationUnsupported>[0], kind: EntityKind) => () => {
  throw new OperationUnsupported(operation, kind.def.name);
};

/** An entity as the admin API shows it: fields in the schema's order, then the kind's own presentation. */
export function presentEntity(kind: EntityKind, entity: StoredEntity): Record<string, unknown> {
  const schema = kind.schemaFor ? kind.schemaFor(entity) : kind.def.schema;
  const ordered = orderBySchema(schema, entity) as StoredEntity;
  return kind.present ? kind.present(ordered) : ordered;
}

/** endpoint-key indexes of one state, built on first use */
const keyIndexes = new WeakMap<DeclarativeState, Map<string, Map<string, StoredEntity[]>>>();

function byKey(state: DeclarativeState, kind: EntityKind, key: string): StoredEntity[] {
  let perKind = keyIndexes.get(state);
  if (!perKind) keyIndexes.set(state, (perKind = new Map()));
  let index = perKind.get(kind.def.name);
  if (!index) {
    index = new Map();
    const field = kind.def.endpointKey!;
    for (const e of state.entities.get(kind.def.name) ?? []) {
      if (typeof e[field] !== 'string') continue;
      const list = index.get(e[field] as string) ?? [];
      list.push(e);
      index.set(e[field] as string, list);
    }
    perKind.set(kind.def.name, index);
  }
  return index.get(key) ?? [];
}

interface Scope {
  field: string;
  id: string;
}

const inScope = (e: StoredEntity, scope?: Scope) => !scope || (e[scope.field] as { id?: string } | null)?.id === scope.id;

/** by id when `ref` is a UUID, else by endpoint key (Kong's rules); null when absent or another parent's */
export function findEntity(state: DeclarativeState, kind: EntityKind, ref: string, scope?: Scope): StoredEntity | null {
  if (isUuid(ref)) {
    const e = state.byId.get(kind.def.name)?.get(ref) ?? null;
    return e && inScope(e, scope) ? e : null;
  }
  if (!kind.def.endpointKey) throw invalidPrimaryKey(ref);
  if (kind.keyUniqueInScope && !scope) return null;
  const key = kind.normalizeKey ? kind.normalizeKey(ref) : ref;
  return byKey(state, kind, key).find((e) => inScope(e, scope)) ?? null;
}

function hasTags(e: StoredEntity, q: ListQuery): boolean {
  const own = Array.isArray(e.tags) ? (e.tags as string[]) : [];
  if (q.tagsAll && !q.tagsAll.every((t) => own.includes(t))) return false;
  if (q.tagsAny && !q.tagsAny.some((t) => own.includes(t))) return false;
  return true;
}

function listOf(req: Request, res: Response, state: DeclarativeState, kind: EntityKind, scope?: Scope): void {
  const q = parseListQuery(req.query);
  const after = q.after?.[0];
  if (after !== undefined && !isUuid(after)) throw Errors.invalidOffset(encodeOffset(q.after!));
  const filters = (kind.listFilters ?? []).filter((f) => req.query[f] !== undefined).map((f) => [f, String(req.query[f])] as const);
  const all = state.entities.get(kind.def.name) ?? [];
  const matching = all.filter((e) => (after === undefined || e.id > after) && inScope(e, scope) && hasTags(e, q) && filters.every(([f, v]) => e[f] === v));
  const page = matching.slice(0, q.size);
  const more = matching.length > q.size;
  sendList(req, res, q, { data: page.map((e) => presentEntity(kind, e)), offset: more ? encodeOffset([page[page.length - 1]!.id]) : null });
}

/**
 * Kong's generated endpoints for one entity, read-only: lists (paging, tags, filters), lookups by id or endpoint
 * key, the lists under a parent and the parent of an entity. Every write answers 405 with Kong's message.
 */
export function mountReadRoutes(resources: ResourceRegistry, kinds: EntityKind[], state: () => DeclarativeState): void {
  const byName = new Map(kinds.map((k) => [k.def.name, k]));
  const one = (kind: EntityKind, ref: string, scope?: Scope) => {
    const found = findEntity(state(), kind, ref, scope);
    if (!found) throw kind.notFound ? kind.notFound(ref) : Errors.notFound();
    return presentEntity(kind, found);
  };
  const writes = (kind: EntityKind) => ({ put: refuse('create or update', kind), patch: refuse('update', kind), delete: refuse('remove', kind) });
  for (const kind of kinds) {
    const base = `/${kind.def.adminPath}`;
    resources.add(base, { get: (req, res) => listOf(req, res, state(), kind), post: refuse('create', kind) });
    resources.add(`${base}/:ref`, { get: (req, res) => void res.json(one(kind, param(req, 'ref'))), ...writes(kind) });
    for (const fk of kind.def.foreignKeys) {
      const parent = byName.get(fk.entity);
      if (!parent || parent === kind) continue;
      const nested = `/${parent.def.adminPath}/:parent/${kind.nestedPaths?.[fk.entity] ?? kind.def.adminPath}`;
      const scopeOf = (req: Request): Scope => {
        const p = findEntity(state(), parent, param(req, 'parent'));
        if (!p) throw parent.notFound ? parent.notFound(param(req, 'parent')) : Errors.notFound();
        return { field: fk.field, id: p.id };
      };
      resources.add(nested, { get: (req, res) => listOf(req, res, state(), kind, scopeOf(req)), post: refuse('create', kind) });
      resources.add(`${nested}/:ref`, { get: (req, res) => void res.json(one(kind, param(req, 'ref'), scopeOf(req))), ...writes(kind) });
      resources.add(`${base}/:ref/${fk.field}`, {
        get: (req, res) => {
          const child = findEntity(state(), kind, param(req, 'ref'));
          const id = (child?.[fk.field] as { id?: string } | null | undefined)?.id;
          if (!child || !id) throw Errors.notFound();
          res.json(one(parent, id));
        },
        ...writes(parent),
      });
    }
  }
}
