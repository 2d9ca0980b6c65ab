import type { AuthResult } from '../contract';
import { declareIndex } from '../shared/credential-index';
import { hmacAuthCredentials } from './entities';

export interface HmacCredential {
  secret: Buffer;
  /** the success outcome, built once per snapshot */
  result: AuthResult & { ok: true };
}

/** username → secret and consumer. */
export const hmacAuthIndex = declareIndex(hmacAuthCredentials, {
  keyedBy: { byUsername: 'username' },
  entry: (row, consumer): HmacCredential | null =>
    typeof row.secret !== 'string' ? null : { secret: Buffer.from(row.secret, 'utf8'), result: { ok: true, consumer, credential: { id: row.id, identifier: row.username as string, consumerId: consumer.id } } },
});

export type HmacAuthIndex = ReturnType<typeof hmacAuthIndex.compile>;
