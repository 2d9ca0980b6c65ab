import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';

export interface KeyAuthEntry {
  /** the success outcome, built once per snapshot so a request allocates nothing for it */
  result: AuthResult & { ok: true };
  /** epoch milliseconds after which the key no longer authenticates; 0 = never */
  expiresAt: number;
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
  return { result: { ok: true, consumer, credential: { id: row.id, identifier: row.id, consumerId: consumer.id } }, expiresAt: expiryOf(row) };
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
      for (const [key, entry] of index.byKey) if (entry.result.credential.consumerId === change.id) index.byKey.delete(key);
      continue;
    }
    if (change.key !== 'credentials/keyauth_credentials') continue;
    const before = change.before;
    if (before && typeof before.key === 'string' && index.byKey.get(before.key)?.result.credential.id === change.id) index.byKey.delete(before.key);
    const after = change.after;
    if (!after || typeof after.key !== 'string') continue;
    const consumerId = (after.consumer as { id?: string } | null)?.id;
    const consumer = consumerId ? (rows('consumers', consumerId) as unknown as Consumer | undefined) : undefined;
    if (consumer) index.byKey.set(after.key, entryOf(after, consumer));
  }
  return true;
}
