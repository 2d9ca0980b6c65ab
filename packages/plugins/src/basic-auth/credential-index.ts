import type { SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';
import { costOf, PASSWORD_COST } from './password';
import { VerifiedCredentialCache } from './verified-cache';

export interface BasicAuthEntry {
  /** the stored bcrypt hash */
  passwordHash: string;
  /** the success outcome, built once per snapshot */
  result: AuthResult & { ok: true };
}

export interface BasicAuthIndex {
  byUsername: Map<string, BasicAuthEntry>;
  verified: VerifiedCredentialCache;
  /** the bcrypt cost most stored hashes have: an unknown username pays a comparison at that cost */
  dummyCost: number;
}

/** username → credential and consumer, plus an empty verified-credential cache for this snapshot. */
export function buildBasicAuthIndex(config: SnapshotConfig): BasicAuthIndex {
  const consumers = new Map(config.consumers.map((c) => [c.id, c]));
  const byUsername = new Map<string, BasicAuthEntry>();
  const costs = new Map<number, number>();
  for (const row of config.credentials.basicauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    if (!consumer || typeof row.username !== 'string' || typeof row.password !== 'string') continue;
    const cost = costOf(row.password);
    if (cost !== null) costs.set(cost, (costs.get(cost) ?? 0) + 1);
    byUsername.set(row.username, {
      passwordHash: row.password,
      result: { ok: true, consumer, credential: { id: row.id, identifier: row.username, consumerId: consumer.id } },
    });
  }
  let dummyCost = PASSWORD_COST;
  let seen = 0;
  for (const [cost, count] of costs) if (count > seen) [dummyCost, seen] = [cost, count];
  return { byUsername, verified: new VerifiedCredentialCache(), dummyCost };
}
