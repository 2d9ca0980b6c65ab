import type { RawBuilder } from 'kysely';
import type { Executor, StoredEntity } from '../store/entity-repository';
import type { EntityKind } from './entity-kind';

/** What a request may do to an entity (RBAC's actions). */
export type EntityAction = 'read' | 'create' | 'update' | 'delete';

/**
 * The caller of a request as the EntityService sees it (RBAC's entity checks, rbac/entity-authorizer.ts). Reads and
 * writes authorize the stored row they already hold; a listing adds `readable` to its page query, so a page holds
 * only rows the caller may read and its `next` follows them. Without one (no RBAC, internal work) all is allowed.
 */
export interface EntityAccess {
  /** throws (Kong's 403) when the caller may not do `action` to this stored row of `kind` */
  authorize(kind: EntityKind, entity: StoredEntity, action: EntityAction, ex: Executor): Promise<void>;
  /** the condition on rows of `kind`'s table that leaves only those the caller may read; undefined = all */
  readable(kind: EntityKind): RawBuilder<boolean> | undefined;
}
