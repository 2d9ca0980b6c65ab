import type { Consumer, SnapshotConfig } from '@gatehouse/core';
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

/** key → credential and consumer; credentials whose consumer is gone are left out. */
export function buildKeyAuthIndex(config: SnapshotConfig): KeyAuthIndex {
  const consumers = consumersById(config);
  const byKey = new Map<string, KeyAuthEntry>();
  for (const row of config.credentials.keyauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    if (!consumer || typeof row.key !== 'string') continue;
    byKey.set(row.key, {
      result: { ok: true, consumer, credential: { id: row.id, identifier: row.id, consumerId: consumer.id } },
      expiresAt: expiryOf(row),
    });
  }
  return { byKey };
}
