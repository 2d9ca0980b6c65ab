import type { z } from 'zod';
import type { EntityDefinition } from '@gatehouse/core';
import type { Executor, PageQuery, StoredEntity } from '../store/entity-repository';
import type { WriteInput } from './entity-service';

/** What a kind's hooks may look at while an entity is written. */
export interface WriteContext {
  trx: Executor;
  /** the stored entity being replaced or patched; null on create */
  previous: StoredEntity | null;
  /** what `prepare` hands on to `afterWrite` (e.g. a certificate's `snis` shorthand) */
  carry?: Record<string, unknown>;
  /** the request's input as given (body, and what the admin middleware learned), when the write comes from one */
  input?: WriteInput;
  /** false for a declarative document with `_transform: false`: values are stored as given (see PrepareOptions) */
  transform?: boolean;
  /** fields added to this write's response only, never stored (a generated token, shown once) */
  reply?: Record<string, unknown>;
}

/**
 * An entity as the admin API serves it: its definition plus the few hooks where an entity differs from the generic
 * path (plugins pick a config schema by name, credentials generate keys, keys seal private material). New entities
 * usually need only `{ def }`.
 */
export interface EntityKind {
  def: EntityDefinition;
  /** the schema to coerce and validate this input with; default `def.schema` */
  schemaFor?(input: Record<string, unknown>): z.ZodObject;
  /** checks that must pass before schema validation (e.g. a plugin name that is not installed) */
  preValidate?(input: Record<string, unknown>): void;
  /** checks after schema validation and `def.check`; throw a DbError to refuse */
  validate?(entity: Record<string, unknown>, ctx: WriteContext): void | Promise<void>;
  /** turns the validated entity into what is stored (generate a key, hash a secret, seal a private key) */
  prepare?(entity: Record<string, unknown>, ctx: WriteContext): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** runs in the write's transaction once the row is stored (rows of other entities that reference it) */
  afterWrite?(entity: StoredEntity, ctx: WriteContext): Promise<void>;
  /** adds what lives in other tables to entities about to be returned (a certificate's `snis` names) */
  expand?(entities: Record<string, unknown>[], ex: Executor): Promise<void>;
  /** what the admin API returns for a stored entity; default: the entity itself */
  present?(entity: StoredEntity): Record<string, unknown>;
  /**
   * path segment of this entity under a parent it references, per parent entity name
   * (e.g. `{ consumers: 'key-auth' }`); default: the entity's adminPath
   */
  nestedPaths?: Record<string, string>;
  /** unique fields a collection GET accepts as exact-match query filters (consumers: `?custom_id=`) */
  listFilters?: string[];
  /** the endpoint key as stored, from the form a URL may give it in (a target `host` → `host:8000`) */
  normalizeKey?(ref: string): string;
  /** the endpoint key is unique only under the parent of the scope (targets), so lookups by key need one */
  keyUniqueInScope?: boolean;
  /** rows another family owns and serves answer a plain 404 through this one (an admin's RBAC user) */
  hides?(entity: StoredEntity, ex: Executor): Promise<boolean>;
  /** what listings leave out, besides scope and filters (a user's default role) */
  listExcludes?: Pick<PageQuery, 'jsonEquals' | 'notReferencedBy'>;
  /** the error for a ref that names nothing; default Kong's `Not found` */
  notFound?(ref: string): Error;
  /**
   * no part of the configuration (RBAC's families): its writes bump no config version, and documents, tags, schemas
   * and the generated routes leave it out (EntityService.allKinds)
   */
  outsideConfiguration?: boolean;
  /** DELETE of an absent entity answers 404 instead of Kong's usual 204 */
  deleteMissingIsNotFound?: boolean;
  /** runs in the delete's transaction before the row goes; throw a DbError to refuse (references the schema cannot express) */
  beforeDelete?(entity: StoredEntity, ctx: WriteContext): Promise<void>;
  /** runs in the delete's transaction once the row is gone (what the entity owned alone) */
  afterDelete?(entity: StoredEntity, ctx: WriteContext): Promise<void>;
}

/** Runs in the transaction of every POST create, once the entity is stored (RBAC: ownership, workspace records). */
export type CreationHook = (trx: Executor, kind: EntityKind, entity: StoredEntity, input: WriteInput) => Promise<void>;

export function plainKind(def: EntityDefinition): EntityKind {
  return { def };
}
