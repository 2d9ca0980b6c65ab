import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { coerceInput, schemaViolation, validateWith } from '@gatehouse/core';
import type { ConfigStore } from '../store/config-store';
import type { Executor, StoredEntity } from '../store/entity-repository';
import type { EntityKind, WriteContext } from './entity-kind';
import type { WriteInput } from './entity-service';
import { foreignKeysUnresolved } from './references';

/** The steps every write of the EntityService goes through: read the input, then validate and prepare it. */

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export function schemaFor(kind: EntityKind, input: Record<string, unknown>): z.ZodObject {
  return kind.schemaFor ? kind.schemaFor(input) : kind.def.schema;
}

/** body → coerced (forms), shorthand expanded, foreign references given by name resolved to ids */
export async function readInput(
  store: ConfigStore,
  kindOf: (name: string) => EntityKind | undefined,
  trx: Executor,
  kind: EntityKind,
  input: WriteInput,
  previous: StoredEntity | null,
): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = { ...input.body };
  if (input.form) body = coerceInput(schemaFor(kind, { ...(previous ?? {}), ...body }), body) as Record<string, unknown>;
  if (kind.def.normalizeInput) body = kind.def.normalizeInput(body);
  for (const fk of kind.def.foreignKeys) {
    const ref = body[fk.field];
    if (!ref || typeof ref !== 'object' || Array.isArray(ref) || 'id' in ref) continue;
    const parent = kindOf(fk.entity);
    const key = parent?.def.endpointKey;
    const given = ref as Record<string, unknown>;
    if (!parent || !key || typeof given[key] !== 'string') continue;
    const found = await store.repo(parent.def.name).findByField(trx, key, given[key] as string);
    if (!found) throw foreignKeysUnresolved(fk.field, given, parent.def.name);
    body[fk.field] = { id: found.id };
  }
  return body;
}

/** the kind's checks, schema validation, then `prepare`: the stored form */
export async function validateEntity(kind: EntityKind, candidate: Record<string, unknown>, ctx: WriteContext): Promise<StoredEntity> {
  kind.preValidate?.(candidate);
  let entity = validateWith(schemaFor(kind, candidate), candidate) as Record<string, unknown>;
  const errors = kind.def.check?.(entity);
  if (errors) throw schemaViolation(errors);
  await kind.validate?.(entity, ctx);
  if (kind.prepare) entity = await kind.prepare(entity, ctx);
  return entity as StoredEntity;
}

/** the checks of a create without writing (Kong's POST /schemas/{entity}/validate) */
export async function checkCreate(body: Record<string, unknown>, kind: EntityKind, ex: Executor): Promise<void> {
  const candidate: Record<string, unknown> = { ...body, id: body.id ?? randomUUID(), created_at: body.created_at ?? nowSeconds() };
  if (kind.def.updatedAt) candidate.updated_at = body.updated_at ?? nowSeconds();
  kind.preValidate?.(candidate);
  const entity = validateWith(schemaFor(kind, candidate), candidate) as Record<string, unknown>;
  const errors = kind.def.check?.(entity);
  if (errors) throw schemaViolation(errors);
  await kind.validate?.(entity, { trx: ex, previous: null });
}
