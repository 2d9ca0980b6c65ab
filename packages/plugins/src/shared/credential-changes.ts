import type { AppliedChange, ConfigRow, Consumer } from '@gatehouse/core';
import type { AuthResult } from '../contract';

/** The configuration's rows after a delta, by section key and id (what `updateIndex` is given). */
export type RowLookup = (section: string, id: string) => ConfigRow | undefined;

/**
 * What a credential index does with the credential rows a delta changed. `remove` gets the row as it was and takes
 * its entry out only while the entry still belongs to that credential (another credential may hold the name now);
 * `add` gets the row as it is now with its consumer; `removeConsumer` drops every entry of a consumer that is gone.
 */
export interface CredentialIndexUpdates {
  /** the credential entity's delta key, e.g. `credentials/basicauth_credentials` */
  section: string;
  remove(before: ConfigRow): void;
  add(after: ConfigRow, consumer: Consumer): void;
  removeConsumer(consumerId: string): void;
}

/** The consumer a credential row belongs to, as the configuration holds it after the delta; undefined when gone. */
export function consumerOf(row: ConfigRow, rows: RowLookup): Consumer | undefined {
  const consumerId = (row.consumer as { id?: unknown } | null | undefined)?.id;
  return typeof consumerId === 'string' ? (rows('consumers', consumerId) as unknown as Consumer | undefined) : undefined;
}

/**
 * Walks a delta's changes for one credential index: a credential created, changed or deleted moves its own entry; a
 * consumer deleted takes its credentials' entries with it (the delta normally deletes them too, by the foreign key's
 * cascade). Consumers created or changed need nothing: entries hold the consumer objects, which change in place.
 */
export function followCredentialChanges(changes: readonly AppliedChange[], rows: RowLookup, updates: CredentialIndexUpdates): boolean {
  for (const change of changes) {
    if (change.key === 'consumers') {
      if (!change.after) updates.removeConsumer(change.id);
      continue;
    }
    if (change.key !== updates.section) continue;
    if (change.before) updates.remove(change.before);
    if (!change.after) continue;
    const consumer = consumerOf(change.after, rows);
    if (consumer) updates.add(change.after, consumer);
  }
  return true;
}

/** An index entry that knows the credential it authenticates as. */
export interface CredentialEntry {
  readonly result: AuthResult & { ok: true };
}

/**
 * Follows a delta for an index of one entry per credential, keyed by the row's `field` (a username, a key): an entry
 * leaves under its old name only while it is still that credential's, and comes back under its new one.
 */
export function followKeyedCredentials<E extends CredentialEntry>(
  changes: readonly AppliedChange[],
  rows: RowLookup,
  section: string,
  field: string,
  byName: Map<string, E>,
  entryOf: (row: ConfigRow, consumer: Consumer) => E | null,
): boolean {
  return followCredentialChanges(changes, rows, {
    section,
    remove(before) {
      const name = before[field];
      if (typeof name === 'string' && byName.get(name)?.result.credential.id === before.id) byName.delete(name);
    },
    add(after, consumer) {
      const entry = entryOf(after, consumer);
      if (entry) byName.set(entry.result.credential.identifier, entry);
    },
    removeConsumer(consumerId) {
      for (const [name, entry] of byName) if (entry.result.credential.consumerId === consumerId) byName.delete(name);
    },
  });
}
