import type { EntityKind } from '../service/entity-kind';
import type { ConfigStore } from '../store/config-store';
import type { Executor, StoredEntity } from '../store/entity-repository';

/** a plugin's credential family (nested under consumers): its prepare keeps what it made of an unchanged value */
const isCredential = (kind: EntityKind) => kind.nestedPaths?.consumers !== undefined && kind.prepare !== undefined;

/** the stored credentials of the document's credential families, by id (what a new apply passes as `previous`) */
export async function previousCredentials(store: ConfigStore, kinds: EntityKind[], trx: Executor): Promise<Map<string, StoredEntity>> {
  const out = new Map<string, StoredEntity>();
  for (const kind of kinds.filter(isCredential)) for (const e of await store.repo(kind.def.name).all(trx)) out.set(e.id, e);
  return out;
}

/** a credential family's current entities by id, from a full read (empty for other kinds: they compare as checked) */
export function storedById(kind: EntityKind, current: Map<string, StoredEntity[]>): Map<string, StoredEntity> {
  if (!isCredential(kind)) return new Map();
  return new Map((current.get(kind.def.name) ?? []).map((e) => [e.id, e]));
}

/**
 * What an apply would store for a credential that exists already: its prepare given the stored one, so a password
 * in clear that verifies against the stored hash compares equal (a check_hash push then answers 304). Other
 * entities, and new credentials, compare as checked.
 */
export async function storedForm(
  kind: EntityKind,
  entity: Record<string, unknown>,
  stored: StoredEntity | null,
  opts: { trx: Executor; transform: boolean },
): Promise<Record<string, unknown>> {
  if (!stored || !isCredential(kind)) return entity;
  return kind.prepare!(entity, { trx: opts.trx, previous: stored, transform: opts.transform });
}
