import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';
import { followKeyedCredentials, type RowLookup } from '../shared/credential-changes';

export interface HmacCredential {
  secret: Buffer;
  /** the success outcome, built once per snapshot */
  result: AuthResult & { ok: true };
}

export interface HmacAuthIndex {
  byUsername: Map<string, HmacCredential>;
}

export const HMAC_AUTH_INDEX_SECTIONS = ['consumers', 'credentials/hmacauth_credentials'] as const;

/** The index entry of one credential row, or null when the row has no usable username or secret. */
function entryOf(row: ConfigRow, consumer: Consumer): HmacCredential | null {
  if (typeof row.username !== 'string' || typeof row.secret !== 'string') return null;
  return {
    secret: Buffer.from(row.secret, 'utf8'),
    result: { ok: true, consumer, credential: { id: row.id, identifier: row.username, consumerId: consumer.id } },
  };
}

/** username → secret and consumer; credentials whose consumer is gone are left out. */
export function buildHmacAuthIndex(config: SnapshotConfig): HmacAuthIndex {
  const consumers = new Map(config.consumers.map((c) => [c.id, c]));
  const byUsername = new Map<string, HmacCredential>();
  for (const row of config.credentials.hmacauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    const entry = consumer ? entryOf(row, consumer) : null;
    if (entry) byUsername.set(entry.result.credential.identifier, entry);
  }
  return { byUsername };
}

/** Follows a delta: a changed credential's username moves, a deleted credential or consumer takes its entries along. */
export function updateHmacAuthIndex(index: HmacAuthIndex, changes: readonly AppliedChange[], rows: RowLookup): boolean {
  return followKeyedCredentials(changes, rows, 'credentials/hmacauth_credentials', 'username', index.byUsername, entryOf);
}
