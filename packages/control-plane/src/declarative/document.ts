import { parse as parseYaml } from 'yaml';
import { canonicalJson, HttpError } from '@gatehouse/core';
import { assertJsonNesting, assertValueNesting, assertYamlNesting } from '../http/nesting';
import { isUuid } from '../service/references';
import type { EntityKind } from '../service/entity-kind';
import { derivedId } from './ids';
import { childrenOf, orderKinds } from './kinds';
import { entityType, type FlattenedError } from './errors';
import { runAtOnce, SliceCounter, type Steps } from './slices';
import { upgradeDocument, withIdRecords, withoutIgnoredKeys } from './upgrade';
import { jsonObjectSteps } from './json-in-slices';

/** Kong's declarative format versions this reader accepts (3.0 is what it writes). */
export const FORMAT_VERSION = '3.0';
const ACCEPTED_VERSIONS = new Set(['1.1', '2.1', '3.0']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** One entity of a document, flattened out of wherever it was nested, with its references resolved to `{id}`. */
export interface DocEntity {
  kind: EntityKind;
  body: Record<string, unknown>;
  /** the parent it was nested under, by field */
  nestedUnder?: { field: string; parent: DocEntity };
}

/** A document's entities per kind, in dependency order, plus what is wrong with them. */
export interface FlatDocument {
  kinds: EntityKind[];
  entities: Map<string, DocEntity[]>;
  errors: FlattenedError[];
  /** false when the document says `_transform: false` (Kong's exports): credentials are stored as given */
  transform: boolean;
}

/**
 * Parses a document given as YAML or JSON text (JSON is YAML). Its nesting is bounded before any parser runs (decision
 * 26); JSON text is read by the JSON parser (far faster and smaller than a YAML document tree), anything else by the
 * YAML one, whose aliases are checked once more on the value they build.
 */
export function parseDocumentText(text: string): Record<string, unknown> {
  let value: unknown = parseJsonDocument(text);
  if (value === undefined) {
    assertYamlNesting(text);
    try {
      value = parseYaml(text, { maxAliasCount: 100, uniqueKeys: true });
    } catch (err) {
      throw new HttpError(400, `failed parsing declarative configuration: ${(err as Error).message.split('\n')[0]}`);
    }
    assertValueNesting(value);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'failed parsing declarative configuration: expected an object');
  }
  return value as Record<string, unknown>;
}

/**
 * parseDocumentText for the admin API: a JSON document is read in slices (json-in-slices.ts), so a large one does not
 * hold up the event loop; any other text (YAML, malformed JSON) goes the whole way.
 */
export function* parseDocumentSteps(text: string): Steps<Record<string, unknown>> {
  const sliced = /^\s*\{/.test(text) ? yield* jsonObjectSteps(text) : undefined;
  return sliced ?? parseDocumentText(text);
}

/** the document when the text is JSON; undefined when it is not (it may still be YAML) */
function parseJsonDocument(text: string): unknown {
  if (!/^\s*\{/.test(text)) return undefined;
  assertJsonNesting(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describe(entity: DocEntity): Pick<FlattenedError, 'entity_type' | 'entity_id' | 'entity_name' | 'entity_tags' | 'entity'> {
  const def = entity.kind.def;
  const body = entity.body;
  const name = def.endpointKey ? body[def.endpointKey] : undefined;
  const out: ReturnType<typeof describe> = { entity_type: entityType(def.name), entity: body };
  if (typeof body.id === 'string') out.entity_id = body.id;
  if (typeof name === 'string') out.entity_name = name;
  if (Array.isArray(body.tags)) out.entity_tags = body.tags.map(String);
  return out;
}

export function entityError(entity: DocEntity, errors: FlattenedError['errors']): FlattenedError {
  return { ...describe(entity), errors };
}

function forbiddenKey(value: unknown, depth = 0): string | null {
  if (depth > 64) return 'nested too deeply';
  if (!value || typeof value !== 'object') return null;
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const inner = forbiddenKey((value as Record<string, unknown>)[key], depth + 1);
    if (inner) return inner;
  }
  return null;
}

/**
 * Flattens a document: top-level lists per entity family (`services`, `keyauth_credentials`, …) and entities
 * nested under their parents (routes under a service, plugins under a route, credentials under a consumer, targets
 * under an upstream) become one list per kind, each child referencing its parent. References given by id, by
 * endpoint key (`service: my-service`) or as `{id}` / `{name}` objects resolve against the document; missing ids
 * are derived (see ids.ts). Nothing here touches the database.
 */
export interface FlattenOptions {
  /** every entity of the document gets these tags (decK's select tags): only tagged entities are managed */
  selectTags?: string[];
  /** entities outside the managed set, per kind: the document may reference them and must not collide with them */
  external?: Map<string, Array<Record<string, unknown>>>;
}

export function flattenDocument(doc: Record<string, unknown>, allKinds: EntityKind[], opts: FlattenOptions = {}): FlatDocument {
  return runAtOnce(flattenSteps(doc, allKinds, opts));
}

/** flattenDocument as steps (slices.ts), for the admin API to run without holding the event loop */
export function* flattenSteps(doc: Record<string, unknown>, allKinds: EntityKind[], opts: FlattenOptions = {}): Steps<FlatDocument> {
  upgradeDocument(doc);
  const slice = new SliceCounter();
  const kinds = orderKinds(allKinds);
  const byName = new Map(kinds.map((k) => [k.def.name, k]));
  const entities = new Map<string, DocEntity[]>(kinds.map((k) => [k.def.name, []]));
  const errors: FlattenedError[] = [];
  const topError = (message: string, field?: string) =>
    errors.push({ entity_type: 'declarative', errors: [{ type: field ? 'field' : 'entity', field, message }] });

  const version = doc._format_version;
  if (doc._transform !== undefined && typeof doc._transform !== 'boolean') topError('expected a boolean', '_transform');
  const transform = doc._transform !== false;
  if (version === undefined) topError('required field missing', '_format_version');
  else if (typeof version !== 'string' || !ACCEPTED_VERSIONS.has(version)) {
    topError(`expected one of: ${[...ACCEPTED_VERSIONS].join(', ')}`, '_format_version');
  }
  const bad = forbiddenKey(doc);
  if (bad) topError(`key '${bad}' is not allowed`);

  const walk = function* (kind: EntityKind, item: unknown, where: string, parent?: { field: string; parent: DocEntity }): Steps<void> {
    if (slice.full()) yield;
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      errors.push({ entity_type: entityType(kind.def.name), errors: [{ type: 'entity', message: `${where}: expected a record` }] });
      return;
    }
    let body: Record<string, unknown> = withIdRecords(kind, withoutIgnoredKeys({ ...(item as Record<string, unknown>) }));
    const entity: DocEntity = { kind, body, nestedUnder: parent };
    const nested: Array<{ kind: EntityKind; field: string; items: unknown[] }> = [];
    for (const child of childrenOf(kinds, kind.def.name)) {
      const value = body[child.kind.def.name];
      if (!Array.isArray(value)) continue;
      // a shorthand field of the same name (a certificate's `snis` as names) becomes child entities named by their
      // endpoint key, so a document never relies on a write hook to create them
      const key = child.kind.def.endpointKey;
      const items = key ? value.map((v) => (typeof v === 'string' ? { [key]: v } : v)) : value;
      nested.push({ kind: child.kind, field: child.field, items });
      delete body[child.kind.def.name];
    }
    if (parent) body[parent.field] = null; // resolved to the parent's id once known
    // shorthand (a service `url`) expanded first, so a derived id does not depend on how the entity was written
    if (kind.def.normalizeInput) body = kind.def.normalizeInput(body);
    if (opts.selectTags?.length) {
      const own = Array.isArray(body.tags) ? (body.tags as unknown[]) : [];
      body.tags = [...own, ...opts.selectTags.filter((t) => !own.includes(t))];
    }
    entity.body = body;
    entities.get(kind.def.name)!.push(entity);
    for (const { kind: childKind, field, items } of nested) {
      for (const [i, child] of items.entries()) yield* walk(childKind, child, `${where}.${childKind.def.name}[${i}]`, { field, parent: entity });
    }
  };

  for (const [key, value] of Object.entries(doc)) {
    if (key.startsWith('_')) continue;
    const kind = byName.get(key);
    if (!kind) {
      topError(`unknown field`, key);
      continue;
    }
    if (!Array.isArray(value)) {
      topError('expected an array', key);
      continue;
    }
    for (const [i, item] of value.entries()) yield* walk(kind, item, `${key}[${i}]`);
  }

  yield* resolveReferences(kinds, entities, errors, slice, opts.external);
  return { kinds, entities, errors, transform };
}

/** In dependency order: references → `{id}`, then the entity's own id (given or derived), then duplicates. */
function* resolveReferences(
  kinds: EntityKind[],
  entities: Map<string, DocEntity[]>,
  errors: FlattenedError[],
  slice: SliceCounter,
  external?: Map<string, Array<Record<string, unknown>>>,
): Steps<void> {
  const ids = new Map<string, Map<string, DocEntity>>();
  const keys = new Map<string, Map<string, DocEntity>>();
  for (const kind of kinds) {
    const def = kind.def;
    const byId = new Map<string, DocEntity>();
    const byKey = new Map<string, DocEntity>();
    ids.set(def.name, byId);
    keys.set(def.name, byKey);
    const uniqueSeen = new Map<string, Set<string>>(def.uniques.map((u) => [u, new Set()]));
    const compositeSeen: Record<string, Set<string>> = {};
    for (const body of external?.get(def.name) ?? []) {
      const outside: DocEntity = { kind, body };
      byId.set(String(body.id), outside);
      if (def.endpointKey && typeof body[def.endpointKey] === 'string') byKey.set(body[def.endpointKey] as string, outside);
      for (const field of def.uniques) if (typeof body[field] === 'string' || typeof body[field] === 'number') uniqueSeen.get(field)!.add(String(body[field]));
    }

    for (const entity of entities.get(def.name)!) {
      if (slice.full()) yield;
      const problems: FlattenedError['errors'] = [];
      for (const fk of def.foreignKeys) {
        if (entity.nestedUnder?.field === fk.field) {
          entity.body[fk.field] = { id: entity.nestedUnder.parent.body.id };
          continue;
        }
        const given = entity.body[fk.field];
        if (given === undefined || given === null) continue;
        const target = resolveOne(given, fk.entity, ids, keys, kinds);
        if (target === 'malformed') problems.push({ type: 'field', field: fk.field, message: 'expected a reference (an id, a name or a record with one)' });
        else if (target === null) problems.push({ type: 'field', field: fk.field, message: `could not find the referenced '${fk.entity}' entity ${JSON.stringify(given)}` });
        else entity.body[fk.field] = { id: target.body.id };
      }
      const derived = entity.body.id === undefined || entity.body.id === null;
      if (derived) entity.body.id = derivedId(def, entity.body);
      const id = String(entity.body.id);
      for (const field of def.uniques) {
        const value = entity.body[field];
        if (typeof value !== 'string' && typeof value !== 'number') continue;
        const seen = uniqueSeen.get(field)!;
        if (seen.has(String(value))) problems.push({ type: 'entity', message: `uniqueness violation: '${def.name}' entity with ${field} set to '${value}' already declared` });
        seen.add(String(value));
      }
      for (const group of def.compositeUniques ?? []) {
        const values = group.map((field) => entity.body[field]);
        if (values.some((v) => v === undefined)) continue;
        const key = canonicalJson(values);
        const seen = (compositeSeen[group.join(',')] ??= new Set());
        if (seen.has(key)) {
          const shown = group.map((field, i) => `${field}=${canonicalJson(values[i])}`).join(', ');
          problems.push({ type: 'entity', message: `uniqueness violation: '${def.name}' entity with ${shown} already declared` });
        }
        seen.add(key);
      }
      // a derived id repeats exactly when what it is derived from does, which the messages above already say
      if (byId.has(id)) {
        if (!derived || problems.length === 0) problems.push({ type: 'entity', message: `uniqueness violation: '${def.name}' entity with primary key set to '${id}' already declared` });
      } else byId.set(id, entity);
      if (def.endpointKey && typeof entity.body[def.endpointKey] === 'string') byKey.set(entity.body[def.endpointKey] as string, entity);
      if (problems.length) errors.push(entityError(entity, problems));
    }
  }
}

function resolveOne(
  given: unknown,
  entityName: string,
  ids: Map<string, Map<string, DocEntity>>,
  keys: Map<string, Map<string, DocEntity>>,
  kinds: EntityKind[],
): DocEntity | null | 'malformed' {
  const byId = ids.get(entityName);
  const byKey = keys.get(entityName);
  if (!byId || !byKey) return null;
  if (typeof given === 'string') return (isUuid(given) ? byId.get(given) : undefined) ?? byKey.get(given) ?? null;
  if (typeof given !== 'object' || Array.isArray(given)) return 'malformed';
  const ref = given as Record<string, unknown>;
  if (typeof ref.id === 'string') return byId.get(ref.id) ?? null;
  const key = kinds.find((k) => k.def.name === entityName)?.def.endpointKey;
  if (key && typeof ref[key] === 'string') return byKey.get(ref[key] as string) ?? null;
  return 'malformed';
}
