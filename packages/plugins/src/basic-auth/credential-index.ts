import { declareIndex, type EntryWithResult } from '../shared/credential-index';
import { basicAuthCredentials } from './entities';
import { costOf, PASSWORD_COST } from './password';
import { VerifiedCredentialCache } from './verified-cache';

/** One username: its stored bcrypt hash and the success outcome. */
export type BasicAuthEntry = EntryWithResult<{ passwordHash: string }>;

/**
 * username → credential and consumer, with an empty verified-password cache for this snapshot and the bcrypt costs of
 * the hashes it holds (`counts`: cost → how many; hashes of no known cost are not counted); an entry that leaves
 * takes the passwords verified for its username along.
 */
export const basicAuthIndex = declareIndex(basicAuthCredentials, {
  keyedBy: { byUsername: 'username' },
  entry: (row, result): BasicAuthEntry | null => (typeof row.password !== 'string' ? null : { passwordHash: row.password, result }),
  extra: () => ({ verified: new VerifiedCredentialCache() }),
  countBy: (entry) => costOf(entry.passwordHash),
  removed: (index, entry) => index.verified.forget(entry.result.credential.identifier),
});

export type BasicAuthIndex = ReturnType<typeof basicAuthIndex.compile>;

/**
 * The bcrypt cost most stored hashes have, the higher one on a tie; PASSWORD_COST when no hash has a known cost. An
 * unknown username pays a comparison at that cost.
 */
export function dummyCostOf(index: BasicAuthIndex): number {
  let dummyCost = PASSWORD_COST;
  let seen = 0;
  for (const [cost, count] of index.counts) if (count > seen || (count === seen && cost > dummyCost)) [dummyCost, seen] = [cost, count];
  return dummyCost;
}
