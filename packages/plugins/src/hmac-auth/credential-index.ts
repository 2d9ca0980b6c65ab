import type { SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';

export interface HmacCredential {
  secret: Buffer;
  /** the success outcome, built once per snapshot */
  result: AuthResult & { ok: true };
}

export interface HmacAuthIndex {
  byUsername: Map<string, HmacCredential>;
}

/** username → secret and consumer; credentials whose consumer is gone are left out. */
export function buildHmacAuthIndex(config: SnapshotConfig): HmacAuthIndex {
  const consumers = new Map(config.consumers.map((c) => [c.id, c]));
  const byUsername = new Map<string, HmacCredential>();
  for (const row of config.credentials.hmacauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    if (!consumer || typeof row.username !== 'string' || typeof row.secret !== 'string') continue;
    byUsername.set(row.username, {
      secret: Buffer.from(row.secret, 'utf8'),
      result: { ok: true, consumer, credential: { id: row.id, identifier: row.username, consumerId: consumer.id } },
    });
  }
  return { byUsername };
}
