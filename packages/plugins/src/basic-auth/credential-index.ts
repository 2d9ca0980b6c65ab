import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';
import { followCredentialChanges, type RowLookup } from '../shared/credential-changes';
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
  /** bcrypt cost → how many indexed hashes have it (hashes of no known cost are not counted) */
  costCounts: Map<number, number>;
  /** the bcrypt cost most stored hashes have: an unknown username pays a comparison at that cost */
  dummyCost: number;
}

export const BASIC_AUTH_INDEX_SECTIONS = ['consumers', 'credentials/basicauth_credentials'] as const;

/** The most common cost, the higher one on a tie; PASSWORD_COST when no hash has a known cost. */
function mostCommonCost(costCounts: ReadonlyMap<number, number>): number {
  let dummyCost = PASSWORD_COST;
  let seen = 0;
  for (const [cost, count] of costCounts) if (count > seen || (count === seen && cost > dummyCost)) [dummyCost, seen] = [cost, count];
  return dummyCost;
}

function countCost(costCounts: Map<number, number>, passwordHash: string, by: 1 | -1): void {
  const cost = costOf(passwordHash);
  if (cost === null) return;
  const count = (costCounts.get(cost) ?? 0) + by;
  if (count > 0) costCounts.set(cost, count);
  else costCounts.delete(cost);
}

/** Puts one credential row in the index (replacing what held its username), or nothing when it lacks fields. */
function addEntry(index: Omit<BasicAuthIndex, 'dummyCost'>, row: ConfigRow, consumer: Consumer): void {
  if (typeof row.username !== 'string' || typeof row.password !== 'string') return;
  const replaced = index.byUsername.get(row.username);
  if (replaced) removeEntry(index, row.username, replaced);
  countCost(index.costCounts, row.password, 1);
  index.byUsername.set(row.username, {
    passwordHash: row.password,
    result: { ok: true, consumer, credential: { id: row.id, identifier: row.username, consumerId: consumer.id } },
  });
}

/** Takes a username's entry out, with its cost and the passwords verified for it. */
function removeEntry(index: Omit<BasicAuthIndex, 'dummyCost'>, username: string, entry: BasicAuthEntry): void {
  index.byUsername.delete(username);
  countCost(index.costCounts, entry.passwordHash, -1);
  index.verified.forget(username);
}

/** username → credential and consumer, plus an empty verified-credential cache for this snapshot. */
export function buildBasicAuthIndex(config: SnapshotConfig): BasicAuthIndex {
  const consumers = new Map(config.consumers.map((c) => [c.id, c]));
  const index = { byUsername: new Map<string, BasicAuthEntry>(), verified: new VerifiedCredentialCache(), costCounts: new Map<number, number>() };
  for (const row of config.credentials.basicauth_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    if (consumer) addEntry(index, row, consumer);
  }
  return { ...index, dummyCost: mostCommonCost(index.costCounts) };
}

/**
 * Follows a delta: a changed credential's username moves and the passwords verified for its old entry are forgotten,
 * a deleted credential or consumer takes its entries along; the cost counts follow, and `dummyCost` is taken again
 * from them (a map of a few costs).
 */
export function updateBasicAuthIndex(index: BasicAuthIndex, changes: readonly AppliedChange[], rows: RowLookup): boolean {
  const { byUsername } = index;
  const followed = followCredentialChanges(changes, rows, {
    section: 'credentials/basicauth_credentials',
    remove(before) {
      if (typeof before.username !== 'string') return;
      const entry = byUsername.get(before.username);
      if (entry?.result.credential.id === before.id) removeEntry(index, before.username, entry);
    },
    add(after, consumer) {
      addEntry(index, after, consumer);
    },
    removeConsumer(consumerId) {
      for (const [username, entry] of byUsername) if (entry.result.credential.consumerId === consumerId) removeEntry(index, username, entry);
    },
  });
  index.dummyCost = mostCommonCost(index.costCounts);
  return followed;
}
