import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { CredentialEntity, CredentialRef, FollowedIndex } from '../contract';

/** The configuration's rows after a delta, by section key and id (what `updateIndex` is given). */
export type RowLookup = (section: string, id: string) => ConfigRow | undefined;

/** An index entry: it knows the credential it stands for, and so that credential's consumer. */
export interface CredentialEntry {
  readonly result: { readonly credential: CredentialRef };
}

/** A declared index as a plugin reads it: one Map per lookup, and what the declaration keeps beside them. */
export type DeclaredIndex<Entry, Names extends string, Extra> = { readonly [N in Names]: Map<string, Entry> } & Extra;

/**
 * What a credential entity's index is keyed by and what an entry holds. Entries exist for rows whose consumer
 * exists; a row lacking a key field, or one `entry` refuses, has none.
 */
export interface CredentialIndexDeclaration<Entry extends CredentialEntry, Names extends string, Extra extends object> {
  /** lookup name → the row field it is keyed by, unique among the entity's rows; the first lookup is the entries' home */
  keyedBy: Readonly<Record<Names, string>>;
  /** what an entry holds, built once per row and consumer; null when the row cannot be used */
  entry(row: ConfigRow, consumer: Consumer): Entry | null;
  /** what the index keeps beside its lookups (counts, caches), fresh for every build; none when absent */
  extra?(): Extra;
  /** told of each entry the home lookup takes in or lets go, so `extra` can follow */
  added?(index: DeclaredIndex<Entry, Names, Extra>, entry: Entry): void;
  removed?(index: DeclaredIndex<Entry, Names, Extra>, entry: Entry): void;
}

const ownerOf = (row: ConfigRow): string | undefined => {
  const id = (row.consumer as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
};

/**
 * Builds and follows every declared credential index. A delta moves a changed credential's entry (it leaves each key
 * only while the entry there is still its own: another credential may hold the name now), and a deleted consumer takes
 * its credentials' entries along (the delta normally deletes them too, by the foreign key's cascade). Consumers
 * created or changed need nothing: entries hold the consumer objects, which change in place.
 */
export function declareIndex<Entry extends CredentialEntry, Names extends string, Extra extends object>(
  entity: CredentialEntity,
  declaration: CredentialIndexDeclaration<Entry, Names, Extra>,
): FollowedIndex<DeclaredIndex<Entry, Names, Extra>> {
  type Index = DeclaredIndex<Entry, Names, Extra>;
  const section = `credentials/${entity.name}`;
  const lookups = Object.entries<string>(declaration.keyedBy);
  const mapsOf = (index: Index): Array<Map<string, Entry>> => lookups.map(([name]) => (index as Record<string, Map<string, Entry>>)[name]!);

  function put(index: Index, row: ConfigRow, consumer: Consumer): void {
    const keys = lookups.map(([, field]) => row[field]);
    if (!keys.every((key): key is string => typeof key === 'string')) return;
    const entry = declaration.entry(row, consumer);
    if (entry === null) return;
    mapsOf(index).forEach((map, i) => {
      const held = map.get(keys[i]!);
      map.set(keys[i]!, entry);
      if (i > 0) return;
      if (held !== undefined && held !== entry) declaration.removed?.(index, held);
      declaration.added?.(index, entry);
    });
  }

  function drop(index: Index, before: ConfigRow): void {
    mapsOf(index).forEach((map, i) => {
      const key = before[lookups[i]![1]];
      const held = typeof key === 'string' ? map.get(key) : undefined;
      if (held?.result.credential.id !== before.id) return;
      map.delete(key as string);
      if (i === 0) declaration.removed?.(index, held);
    });
  }

  function dropConsumer(index: Index, consumerId: string): void {
    mapsOf(index).forEach((map, i) => {
      for (const [key, entry] of map) {
        if (entry.result.credential.consumerId !== consumerId) continue;
        map.delete(key);
        if (i === 0) declaration.removed?.(index, entry);
      }
    });
  }

  function compile(config: SnapshotConfig): Index {
    const index = Object.assign(declaration.extra?.() ?? {}, Object.fromEntries(lookups.map(([name]) => [name, new Map<string, Entry>()]))) as Index;
    const consumers = new Map(config.consumers.map((c) => [c.id, c]));
    for (const row of config.credentials[entity.name] ?? []) {
      const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
      if (consumer) put(index, row, consumer);
    }
    return index;
  }

  function updateIndex(index: Index, changes: readonly AppliedChange[], rows: RowLookup): boolean {
    for (const change of changes) {
      if (change.key === 'consumers') {
        if (!change.after) dropConsumer(index, change.id);
      } else if (change.key === section) {
        if (change.before) drop(index, change.before);
        const consumerId = change.after ? ownerOf(change.after) : undefined;
        // consumer rows are stored as the snapshot's consumers: the configuration checks them on the way in
        const consumer = consumerId === undefined ? undefined : (rows('consumers', consumerId) as Consumer | undefined);
        if (consumer) put(index, change.after!, consumer);
      }
    }
    return true;
  }

  return { entity, keyedBy: declaration.keyedBy, compile, indexSections: ['consumers', section], updateIndex };
}
