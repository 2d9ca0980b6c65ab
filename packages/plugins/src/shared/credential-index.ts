import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, CredentialEntity, CredentialRef, FollowedIndex } from '../contract';

/** The configuration's rows after a delta, by section key and id (what `updateIndex` is given). */
export type RowLookup = (section: string, id: string) => ConfigRow | undefined;

/** What a request presenting a credential gets: its consumer and the credential, built once per row. */
export type CredentialResult = AuthResult & { ok: true; consumer: Consumer; credential: CredentialRef & { id: string; consumerId: string } };

/** An index entry: it knows the credential it stands for, and so that credential's consumer. */
export interface CredentialEntry {
  readonly result: { readonly credential: CredentialRef };
}

/** An entry holding `Fields` and the success result of its credential. */
export type EntryWithResult<Fields> = Fields & { result: CredentialResult };

/**
 * A declared index as a plugin reads it: one Map per lookup, what the declaration keeps beside them, and the tally and
 * grouping the builder keeps for every index (empty when not declared).
 */
export type DeclaredIndex<Entry, Names extends string, Extra, Key = never, Summary = never> = { readonly [N in Names]: Map<string, Entry> } & Extra & {
  /** `countBy`'s key → how many entries have it; keys of no entry are absent */
  readonly counts: Map<Key, number>;
  /** consumer id → its entries in credential id order, when `summarize` is declared; consumers without any are absent */
  readonly entriesByConsumer: Map<string, Entry[]>;
  /** consumer id → `summarize` of its entries, made again only when they change */
  readonly byConsumer: Map<string, Summary>;
};

/**
 * What a credential entity's index is keyed by and what an entry holds. Entries exist for rows whose consumer
 * exists; a row lacking a key field, or one `entry` refuses, has none.
 */
export interface CredentialIndexDeclaration<Entry extends CredentialEntry, Names extends string, Extra extends object, Key, Summary> {
  /** lookup name → the row field it is keyed by, unique among the entity's rows; the first lookup is the entries' home */
  keyedBy: Readonly<Record<Names, string>>;
  /** the row field the success result names the credential by (its `identifier`); the home lookup's field when absent */
  identifiedBy?: string;
  /** what an entry holds, built once per row and consumer from the row and its success result; null when the row cannot be used */
  entry(row: ConfigRow, result: CredentialResult): Entry | null;
  /** what the index keeps beside its lookups (caches), fresh for every build; none when absent */
  extra?(): Extra;
  /** the key `counts` tallies an entry of the home lookup under; null: not counted */
  countBy?(entry: Entry): Key | null;
  /** what `byConsumer` holds for a consumer's entries (in credential id order); absent: no grouping */
  summarize?(entries: readonly Entry[]): Summary;
  /** told of each entry the home lookup lets go, so `extra` can follow */
  removed?(index: DeclaredIndex<Entry, Names, Extra, Key, Summary>, entry: Entry): void;
}

/** Sets `key` to `value`, or deletes it when there is none. */
function keep<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
  if (value === undefined) map.delete(key);
  else map.set(key, value);
}

/**
 * Builds and follows every declared credential index. A delta moves a changed credential's entry (it leaves each key
 * only while the entry there is still its own: another credential may hold the name now), and a deleted consumer takes
 * its credentials' entries along (the delta normally deletes them too, by the foreign key's cascade). Consumers
 * created or changed need nothing: entries hold the consumer objects, which change in place.
 */
export function declareIndex<Entry extends CredentialEntry, Names extends string, Extra extends object = object, Key = never, Summary = never>(
  entity: CredentialEntity,
  declaration: CredentialIndexDeclaration<Entry, Names, Extra, Key, Summary>,
): FollowedIndex<DeclaredIndex<Entry, Names, Extra, Key, Summary>> {
  type Index = DeclaredIndex<Entry, Names, Extra, Key, Summary>;
  const section = `credentials/${entity.name}`;
  const lookups = Object.entries<string>(declaration.keyedBy);
  const mapsOf = (index: Index): Array<Map<string, Entry>> => lookups.map(([name]) => (index as Record<string, Map<string, Entry>>)[name]!);
  const { summarize, identifiedBy = lookups[0]![1] } = declaration;
  /** the row fields an entry needs: its keys, then its identifier */
  const fields = [...lookups.map(([, field]) => field), identifiedBy];

  /** Keeps the tally and the grouping as the home lookup takes in (+1) or lets go (-1) an entry. */
  function follow(index: Index, entry: Entry, by: 1 | -1): void {
    if (by < 0) declaration.removed?.(index, entry);
    const key = declaration.countBy?.(entry) ?? null;
    // a count that falls to 0 leaves
    if (key !== null) keep(index.counts, key, (index.counts.get(key) ?? 0) + by || undefined);
    if (summarize) regroup(index, entry, by, summarize);
  }

  function regroup(index: Index, entry: Entry, by: 1 | -1, summary: (entries: readonly Entry[]) => Summary): void {
    const { id, consumerId } = entry.result.credential as CredentialResult['credential'];
    const entries = (index.entriesByConsumer.get(consumerId) ?? []).filter((held) => held !== entry);
    const at = entries.findIndex((held) => held.result.credential.id! > id);
    if (by > 0) entries.splice(at < 0 ? entries.length : at, 0, entry);
    keep(index.entriesByConsumer, consumerId, entries.length > 0 ? entries : undefined);
    keep(index.byConsumer, consumerId, entries.length > 0 ? summary(entries) : undefined);
  }

  /** Enters a row whose consumer `consumerById` finds. */
  function put(index: Index, row: ConfigRow, consumerById: (id: string) => Consumer | undefined): void {
    const consumerId = (row.consumer as { id?: unknown } | null | undefined)?.id;
    const consumer = typeof consumerId === 'string' ? consumerById(consumerId) : undefined;
    const keys = fields.map((field) => row[field]);
    if (!consumer || !keys.every((key): key is string => typeof key === 'string')) return;
    const credential = { id: row.id, identifier: keys[lookups.length]!, consumerId: consumer.id };
    const entry = declaration.entry(row, { ok: true, consumer, credential });
    if (entry === null) return;
    mapsOf(index).forEach((map, i) => {
      const held = map.get(keys[i]!);
      map.set(keys[i]!, entry);
      if (i > 0) return;
      if (held !== undefined && held !== entry) follow(index, held, -1);
      follow(index, entry, 1);
    });
  }

  function drop(index: Index, before: ConfigRow): void {
    mapsOf(index).forEach((map, i) => {
      const key = before[lookups[i]![1]];
      const held = typeof key === 'string' ? map.get(key) : undefined;
      if (held?.result.credential.id !== before.id) return;
      map.delete(key as string);
      if (i === 0) follow(index, held, -1);
    });
  }

  function dropConsumer(index: Index, consumerId: string): void {
    mapsOf(index).forEach((map, i) => {
      for (const [key, entry] of map) {
        if (entry.result.credential.consumerId !== consumerId) continue;
        map.delete(key);
        if (i === 0) follow(index, entry, -1);
      }
    });
  }

  function compile(config: SnapshotConfig): Index {
    const kept = { counts: new Map(), entriesByConsumer: new Map(), byConsumer: new Map() };
    const index = Object.assign(declaration.extra?.() ?? {}, kept, Object.fromEntries(lookups.map(([name]) => [name, new Map<string, Entry>()]))) as Index;
    const consumers = new Map(config.consumers.map((c) => [c.id, c]));
    for (const row of config.credentials[entity.name] ?? []) put(index, row, (id) => consumers.get(id));
    return index;
  }

  function updateIndex(index: Index, changes: readonly AppliedChange[], rows: RowLookup): boolean {
    for (const change of changes) {
      if (change.key === 'consumers') {
        if (!change.after) dropConsumer(index, change.id);
      } else if (change.key === section) {
        if (change.before) drop(index, change.before);
        // consumer rows are stored as the snapshot's consumers: the configuration checks them on the way in
        if (change.after) put(index, change.after, (id) => rows('consumers', id) as Consumer | undefined);
      }
    }
    return true;
  }

  return { entity, keyedBy: declaration.keyedBy, compile, indexSections: ['consumers', section], updateIndex };
}
