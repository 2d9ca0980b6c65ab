import { declareIndex, type EntryWithResult } from '../shared/credential-index';
import { hmacAuthCredentials } from './entities';

/** One username: its secret and the success outcome. */
export type HmacCredential = EntryWithResult<{ secret: Buffer }>;

/** username → secret and consumer. */
export const hmacAuthIndex = declareIndex(hmacAuthCredentials, {
  keyedBy: { byUsername: 'username' },
  entry: (row, result): HmacCredential | null => (typeof row.secret !== 'string' ? null : { secret: Buffer.from(row.secret, 'utf8'), result }),
});

export type HmacAuthIndex = ReturnType<typeof hmacAuthIndex.compile>;
