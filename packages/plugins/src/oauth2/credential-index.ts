import { declareIndex, type CredentialResult } from '../shared/credential-index';
import { oauth2Credentials } from './entities';
import { isHashedSecret, sameSecret, verifyHashedSecret } from './secret';

/** One oauth2 application (credential) as the endpoints and the access check need it. */
export interface OAuth2Client {
  id: string;
  client_id: string;
  client_type: 'confidential' | 'public';
  /** null when the application registered none */
  redirect_uris: string[] | null;
  /** the success outcome of a request carrying one of its tokens, built once per snapshot */
  result: CredentialResult;
  /** whether `given` is this application's secret */
  secretMatches(given: string): boolean | Promise<boolean>;
}

function secretChecker(stored: unknown, hashed: boolean): (given: string) => boolean | Promise<boolean> {
  if (typeof stored !== 'string' || stored === '') return () => false;
  // a secret hashed while hash_secret was on stays a hash if the flag is turned off again
  if (hashed || isHashedSecret(stored)) return (given) => verifyHashedSecret(given, stored);
  return (given) => sameSecret(given, stored);
}

/** client_id → application and id → application. */
export const oauth2Index = declareIndex(oauth2Credentials, {
  keyedBy: { byClientId: 'client_id', byId: 'id' },
  entry: (row, result): OAuth2Client => ({
    id: row.id,
    client_id: row.client_id as string,
    client_type: row.client_type === 'public' ? 'public' : 'confidential',
    redirect_uris: Array.isArray(row.redirect_uris) ? (row.redirect_uris as unknown[]).filter((u): u is string => typeof u === 'string') : null,
    result,
    secretMatches: secretChecker(row.client_secret, row.hash_secret === true),
  }),
});

export type OAuth2Index = ReturnType<typeof oauth2Index.compile>;
