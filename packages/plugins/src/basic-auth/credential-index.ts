import type { AuthResult } from '../contract';
import { declareIndex } from '../shared/credential-index';
import { basicAuthCredentials } from './entities';
import { costOf, PASSWORD_COST } from './password';
import { VerifiedCredentialCache } from './verified-cache';

export interface BasicAuthEntry {
  /** the stored bcrypt hash */
  passwordHash: string;
  /** the success outcome, built once per snapshot */
  result: AuthResult & { ok: true };
}

/** The most common cost, the higher one on a tie; PASSWORD_COST when no hash has a known cost. */
function mostCommonCost(costCounts: ReadonlyMap<number, number>): number {
  let dummyCost = PASSWORD_COST;
  let seen = 0;
  for (const [cost, count] of costCounts) if (count > seen || (count === seen && cost > dummyCost)) [dummyCost, seen] = [cost, count];
  return dummyCost;
}

/** What the index keeps beside its entries: the passwords verified, and the costs of the hashes it holds. */
interface PasswordCosts {
  verified: VerifiedCredentialCache;
  /** bcrypt cost → how many indexed hashes have it (hashes of no known cost are not counted) */
  costCounts: Map<number, number>;
  /** the bcrypt cost most stored hashes have: an unknown username pays a comparison at that cost */
  dummyCost: number;
}

function countCost(index: PasswordCosts, passwordHash: string, by: 1 | -1): void {
  const cost = costOf(passwordHash);
  if (cost === null) return;
  const count = (index.costCounts.get(cost) ?? 0) + by;
  if (count > 0) index.costCounts.set(cost, count);
  else index.costCounts.delete(cost);
  index.dummyCost = mostCommonCost(index.costCounts);
}

/**
 * username → credential and consumer, with an empty verified-password cache for this snapshot; an entry that leaves
 * takes the passwords verified for its username along.
 */
export const basicAuthIndex = declareIndex(basicAuthCredentials, {
  keyedBy: { byUsername: 'username' },
  entry: (row, consumer): BasicAuthEntry | null =>
    typeof row.password !== 'string' ? null : { passwordHash: row.password, result: { ok: true, consumer, credential: { id: row.id, identifier: row.username as string, consumerId: consumer.id } } },
  extra: (): PasswordCosts => ({ verified: new VerifiedCredentialCache(), costCounts: new Map(), dummyCost: PASSWORD_COST }),
  added: (index, entry) => countCost(index, entry.passwordHash, 1),
  removed(index, entry) {
    countCost(index, entry.passwordHash, -1);
    index.verified.forget(entry.result.credential.identifier);
  },
});

export type BasicAuthIndex = ReturnType<typeof basicAuthIndex.compile>;
