import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, CredentialRef } from '../contract';

/**
 * One key: the outcome a request with it gets, which is also its credential reference, in one object (a configuration
 * of 100,000 keys holds 100,000 of them). Built once per credential, so a request allocates nothing for it.
 */
export class KeyAuthEntry implements CredentialRef {
  readonly ok = true as const;
  readonly credential: CredentialRef;
  readonly identifier: string;

  constructor(
    readonly id: string,
    readonly consumer: Consumer,
    readonly consumerId: string,
    /** epoch milliseconds after which the key no longer authenticates; 0 = never */
    readonly expiresAt: number,
  ) {
    this.identifier = id;
    this.credential = this;
  }

  /** the success outcome (the entry itself) */
  get result(): AuthResult & { ok: true } {
    return this;
  }
}

export interface KeyAuthIndex {
  byKey: Map<string, KeyAuthEntry>;
}

/**
 * When a credential with a ttl stops working. The snapshot may carry `expires_at` (epoch seconds); otherwise the
 * expiry is `created_at + ttl`.
 */
export function expiryOf(row: Record<string, unknown>): number {
  if (typeof row.expires_at === 'number' && row.expires_at > 0) return row.expires_at * 1000;
  if (typeof row.ttl === 'number' && row.ttl > 0 && typeof row.created_at === 'number') return (row.created_at + row.ttl) * 1000;
  return 0;
}

export function consumersById(config: SnapshotConfig): Map<string, Consumer> {
  return new Map(config.consumers.map((c) => [c.id, c]));
}

function entryOf(row: Record<string, unknown> & { id: string }, consumer: Consumer): KeyAuthEntry {
  return new KeyAuthEntry(row.id, consumer, consumer.id, expiryOf(row));
}

/** key → credential and consumer; credentials whose consumer is gone are left out. */
export function buildKeyAuthIndex(config: SnapshotConfig): KeyAuthIndex {
  const consumers = consumersById(config);
  const byKey = new Map<string, KeyAuthEntry>();
  for (const row of config.credentials.keyauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    if (!consumer || typeof row.key !== 'string') continue;
    byKey.set(row.key, entryOf(row, consumer));
  }
  return { byKey };
}

export const KEY_AUTH_INDEX_SECTIONS = ['consumers', 'credentials/keyauth_credentials'] as const;

/**
 * Follows a delta: keys of changed credentials move, removed ones go. Consumer objects are updated in place by the
 * configuration, so entries follow a consumer's new fields; a removed consumer's credentials are removed with it (the
 * foreign key cascades), and the delta says so.
 */
export function updateKeyAuthIndex(index: KeyAuthIndex, changes: readonly AppliedChange[], rows: (section: string, id: string) => ConfigRow | undefined): boolean {
  for (const change of changes) {
    if (change.key === 'consumers') {
      if (change.after) continue;
      // a consumer gone: its credentials went with it, unless the delta is not from a database with cascades
      for (const [key, entry] of index.byKey) if (entry.consumerId === change.id) index.byKey.delete(key);
      continue;
    }
    if (change.key !== 'credentials/keyauth_credentials') continue;
    const before = change.before;
    if (before && typeof before.key === 'string' && index.byKey.get(before.key)?.id === change.id) index.byKey.delete(before.key);
    const after = change.after;
    if (!after || typeof after.key !== 'string') continue;
    const consumerId = (after.consumer as { id?: string } | null)?.id;
    const consumer = consumerId ? (rows('consumers', consumerId) as unknown as Consumer | undefined) : undefined;
    if (consumer) index.byKey.set(after.key, entryOf(after, consumer));
  }
  return true;
}
