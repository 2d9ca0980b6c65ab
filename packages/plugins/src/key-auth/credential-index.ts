import type { Consumer } from '@gatehouse/core';
import type { AuthResult, CredentialRef } from '../contract';
import { declareIndex } from '../shared/credential-index';
import { keyAuthCredentials } from './entities';

/**
 * One key: the outcome a request with it gets, which is also its credential reference, in one object (a configuration
 * of 100,000 keys holds 100,000 of them). Built once per credential, so a request allocates nothing for it.
 */
export class KeyAuthEntry implements CredentialRef {
  readonly ok = true as const;
  readonly credential: CredentialRef;
  readonly identifier: string;

  constructor(
    readonly id: string,
    readonly consumer: Consumer,
    readonly consumerId: string,
    /** epoch milliseconds after which the key no longer authenticates; 0 = never */
    readonly expiresAt: number,
  ) {
    this.identifier = id;
    this.credential = this;
  }

  /** the success outcome (the entry itself) */
  get result(): AuthResult & { ok: true } {
    return this;
  }
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

/** key → credential and consumer. */
export const keyAuthIndex = declareIndex(keyAuthCredentials, {
  keyedBy: { byKey: 'key' },
  identifiedBy: 'id',
  entry: (row, { consumer }) => new KeyAuthEntry(row.id, consumer, consumer.id, expiryOf(row)),
});

export type KeyAuthIndex = ReturnType<typeof keyAuthIndex.compile>;
