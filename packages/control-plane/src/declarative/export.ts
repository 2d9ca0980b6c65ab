import type { EntityService } from '../service/entity-service';
import type { EntityKind } from '../service/entity-kind';
import type { Executor, StoredEntity } from '../store/entity-repository';
import { FORMAT_VERSION } from './document';
import { orderKinds } from './kinds';

/** The kinds a document holds: every registered entity family (RBAC keeps its own tables and is not one of them). */
export function documentKinds(entities: EntityService): EntityKind[] {
  return orderKinds(entities.allKinds());
}

/** true when the entity carries every one of `tags` */
export function hasTags(entity: Record<string, unknown>, tags: string[] | undefined): boolean {
  if (!tags?.length) return true;
  const own = Array.isArray(entity.tags) ? entity.tags : [];
  return tags.every((t) => own.includes(t));
}

/**
 * An entity as a document writes it: references as plain ids (`service: <id>`), null fields left out, fields in the
 * schema's order. Equal state always gives equal bytes.
 */
export function toDocumentEntity(kind: EntityKind, presented: Record<string, unknown>): Record<string, unknown> {
  const fkFields = new Set(kind.def.foreignKeys.map((fk) => fk.field));
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(presented)) {
    if (value === null || value === undefined || field === 'ws_id') continue;
    out[field] = fkFields.has(field) && typeof value === 'object' && 'id' in (value as object) ? (value as { id: unknown }).id : value;
  }
  return out;
}

export interface ExportOptions {
  /** only entities carrying all of these tags */
  selectTags?: string[];
  /** what a caller may see of an entity (private material removed for callers that may not write it) */
  redact?: (kind: EntityKind, entity: Record<string, unknown>) => Record<string, unknown>;
}

/** Every entity of each kind, by id, in one consistent read. */
export async function readAll(entities: EntityService, kinds: EntityKind[], ex: Executor): Promise<Map<string, StoredEntity[]>> {
  const out = new Map<string, StoredEntity[]>();
  for (const kind of kinds) out.set(kind.def.name, await entities.store.repo(kind.def.name).all(ex));
  return out;
}

/** The whole configuration as a Kong 3.0 declarative document (families in dependency order, entities by id). */
export async function exportDocument(entities: EntityService, opts: ExportOptions = {}): Promise<{ version: number; document: Record<string, unknown> }> {
  const kinds = documentKinds(entities);
  const { version, result } = await entities.store.readConsistent((trx) => readAll(entities, kinds, trx));
  const document: Record<string, unknown> = { _format_version: FORMAT_VERSION };
  for (const kind of kinds) {
    const list = result
      .get(kind.def.name)!
      .filter((e) => hasTags(e, opts.selectTags))
      .map((stored) => {
        const presented = entities.present(kind, stored);
        return toDocumentEntity(kind, opts.redact ? opts.redact(kind, presented) : presented);
      });
    if (list.length > 0) document[kind.def.name] = list;
  }
  return { version, document };
}
