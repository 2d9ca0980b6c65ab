import type { z } from 'zod';
import type { FieldErrors } from '../errors';
import type { PrivateField } from './private-fields';

/** A reference from one entity to another, stored as `{id}` (Kong's foreign field). */
export interface ForeignKey {
  /** the field on this entity, e.g. `service` */
  field: string;
  /** the referenced entity's name, e.g. `services` */
  entity: string;
  /** what deleting the referenced row does to this one */
  onDelete: 'cascade' | 'restrict';
  required: boolean;
}

/**
 * Everything the platform needs to know about one entity: the zod schema (the single source of validation,
 * types, defaults, the OpenAPI document and Kong's /schemas output) plus the storage and admin metadata that
 * Kong keeps beside its schemas (endpoint key, unique fields, foreign keys, cascades).
 */
export interface EntityDefinition<S extends z.ZodObject = z.ZodObject> {
  /** Kong's DAO name; also the table name and the `entity_type` used by RBAC (e.g. `consumers`). */
  name: string;
  /** the collection's admin path segment, e.g. `consumers`, `key-auths` */
  adminPath: string;
  schema: S;
  /** field used to look an entity up when the path segment is not a UUID */
  endpointKey?: string;
  /** fields that are unique on their own */
  uniques: string[];
  /** groups of fields unique together (e.g. keys: kid + set) */
  compositeUniques?: string[][];
  foreignKeys: ForeignKey[];
  /** entity-level checks run after field validation; returns errors or null */
  check?: (entity: Record<string, unknown>) => FieldErrors | null;
  /** turns shorthand input into stored fields before validation (e.g. a service `url`) */
  normalizeInput?: (input: Record<string, unknown>) => Record<string, unknown>;
  /** fields carrying secrets that the admin API never returns as given (they are hashed before storage) */
  hasTtl?: boolean;
  /** whether the entity carries `updated_at` */
  updatedAt: boolean;
  /** fields holding private material, served only to callers that may write the entity (decision 18) */
  privateFields?: readonly PrivateField[];
}

export function defineEntity<S extends z.ZodObject>(def: EntityDefinition<S>): EntityDefinition<S> {
  return def;
}

/** A row the store holds for an entity: what the entity's schema parses to, with the fields the store sets. */
export type EntityRow<D extends EntityDefinition> = z.infer<D['schema']> & { id: string; created_at: number; updated_at: number };

/**
 * A stored row read as its entity's type. Rows reach the store only through the entity's schema (admin writes,
 * declarative loads), so their shape is the schema's; this is the one place the type is given back to them.
 */
export function rowOf<D extends EntityDefinition>(_entity: D, row: Record<string, unknown>): EntityRow<D> {
  return row as EntityRow<D>;
}
