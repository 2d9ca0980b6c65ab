import { createHash } from 'node:crypto';
import { canonicalJson, type EntityDefinition } from '@gatehouse/core';

/** A name-based (version 5 style, SHA-1) UUID: the same type and key give the same id in every run, on every node. */
export function nameBasedUuid(name: string): string {
  const bytes = createHash('sha1').update('gatehouse:declarative:').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function refId(value: unknown): string {
  if (value && typeof value === 'object' && 'id' in value) return String((value as { id: unknown }).id);
  return value == null ? '' : String(value);
}

/**
 * The id of an entity that a document gives without one, derived from what identifies it: its endpoint key (a
 * consumer's username, a key-auth credential's key) and the parents it hangs under; else the fields it is unique by
 * together (a plugin's name and scope); else its whole content. References must already be resolved to `{id}`.
 */
export function derivedId(def: EntityDefinition, entity: Record<string, unknown>): string {
  const parents = def.foreignKeys.map((fk) => `${fk.field}=${refId(entity[fk.field])}`).join('&');
  const key = def.endpointKey ? entity[def.endpointKey] : undefined;
  if (typeof key === 'string' && key !== '') return nameBasedUuid(`${def.name}|${parents}|${def.endpointKey}=${key}`);
  for (const group of def.compositeUniques ?? []) {
    if (group.every((field) => entity[field] !== undefined)) {
      const values = group.map((field) => `${field}=${def.foreignKeys.some((fk) => fk.field === field) ? refId(entity[field]) : canonicalJson(entity[field])}`);
      return nameBasedUuid(`${def.name}|${values.join('&')}`);
    }
  }
  const { id: _id, created_at: _c, updated_at: _u, ...content } = entity;
  return nameBasedUuid(`${def.name}|${canonicalJson(content)}`);
}
