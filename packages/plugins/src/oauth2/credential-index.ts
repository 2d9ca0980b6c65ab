import type { AppliedChange, ConfigRow, Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult } from '../contract';
import { consumersById } from '../key-auth/credential-index';
import { followCredentialChanges, type RowLookup } from '../shared/credential-changes';
import { isHashedSecret, sameSecret, verifyHashedSecret } from './secret';

/** One oauth2 application (credential) as the endpoints and the access check need it. */
export interface OAuth2Client {
  id: string;
  client_id: string;
  client_type: 'confidential' | 'public';
  /** null when the application registered none */
  redirect_uris: string[] | null;
  /** the success outcome of a request carrying one of its tokens, built once per snapshot */
  result: AuthResult & { ok: true };
  /** whether `given` is this application's secret */
  secretMatches(given: string): boolean | Promise<boolean>;
}

export interface OAuth2Index {
  byClientId: Map<string, OAuth2Client>;
  byId: Map<string, OAuth2Client>;
}

function secretChecker(stored: unknown, hashed: boolean): (given: string) => boolean | Promise<boolean> {
  if (typeof stored !== 'string' || stored === '') return () => false;
  // a secret hashed while hash_secret was on stays a hash if the flag is turned off again
  if (hashed || isHashedSecret(stored)) return (given) => verifyHashedSecret(given, stored);
  return (given) => sameSecret(given, stored);
}

export const OAUTH2_INDEX_SECTIONS = ['consumers', 'credentials/oauth2_credentials'] as const;

/** The application of one oauth2_credentials row, or null when the row has no client_id. */
function clientOf(row: ConfigRow, consumer: Consumer): OAuth2Client | null {
  if (typeof row.client_id !== 'string') return null;
  return {
    id: row.id,
    client_id: row.client_id,
    client_type: row.client_type === 'public' ? 'public' : 'confidential',
    redirect_uris: Array.isArray(row.redirect_uris) ? (row.redirect_uris as unknown[]).filter((u): u is string => typeof u === 'string') : null,
    result: { ok: true, consumer, credential: { id: row.id, identifier: row.client_id, consumerId: consumer.id } },
    secretMatches: secretChecker(row.client_secret, row.hash_secret === true),
  };
}

/** client_id → application and id → application; applications whose consumer is gone are left out. */
export function buildOAuth2Index(config: SnapshotConfig): OAuth2Index {
  const consumers = consumersById(config);
  const byClientId = new Map<string, OAuth2Client>();
  const byId = new Map<string, OAuth2Client>();
  for (const row of config.credentials.oauth2_credentials ?? []) {
    const consumer = row.consumer ? consumers.get(row.consumer.id) : undefined;
    const client = consumer ? clientOf(row, consumer) : null;
    if (!client) continue;
    byClientId.set(client.client_id, client);
    byId.set(client.id, client);
  }
  return { byClientId, byId };
}

/**
 * Follows a delta: a changed application gets a new entry under its possibly new client_id, a deleted application or
 * consumer takes its entries along. `byId` holds one entry per application, so removing by id needs no check.
 */
export function updateOAuth2Index(index: OAuth2Index, changes: readonly AppliedChange[], rows: RowLookup): boolean {
  const { byClientId, byId } = index;
  const drop = (client: OAuth2Client) => {
    byId.delete(client.id);
    if (byClientId.get(client.client_id) === client) byClientId.delete(client.client_id);
  };
  return followCredentialChanges(changes, rows, {
    section: 'credentials/oauth2_credentials',
    remove(before) {
      const client = byId.get(before.id);
      if (client) drop(client);
    },
    add(after, consumer) {
      const client = clientOf(after, consumer);
      if (!client) return;
      byClientId.set(client.client_id, client);
      byId.set(client.id, client);
    },
    removeConsumer(consumerId) {
      for (const client of byId.values()) if (client.result.credential.consumerId === consumerId) drop(client);
    },
  });
}
