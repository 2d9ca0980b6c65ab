import { describe, expect, it } from '@jest/globals';
import type { AppliedChange, ConfigRow } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, outcomeOf, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { buildOAuth2Index, OAUTH2_INDEX_SECTIONS, updateOAuth2Index, type OAuth2Client, type OAuth2Index } from './credential-index';

const kind: CredentialKind = {
  entity: 'oauth2_credentials',
  nameField: 'client_id',
  fields: (random, n) => ({
    name: `app-${n}`,
    client_secret: `secret-${n}`,
    hash_secret: false,
    client_type: random() < 0.5 ? 'public' : 'confidential',
    redirect_uris: random() < 0.7 ? [`https://app-${n}.test/cb`] : null,
  }),
};

const clientOf = (c: OAuth2Client) => ({ id: c.id, client_id: c.client_id, client_type: c.client_type, redirect_uris: c.redirect_uris, ...(outcomeOf(c.result) as object) });

const oauth2: IndexUnderTest<OAuth2Index> = {
  compile: buildOAuth2Index,
  update: updateOAuth2Index,
  sections: OAUTH2_INDEX_SECTIONS,
  normalise: (index) => ({ byClientId: sortedEntries(index.byClientId, clientOf), byId: sortedEntries(index.byId, clientOf) }),
};

describe('oauth2 index updated by deltas', () => {
  it('equals the index compiled from the resulting config after every random delta', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, oauth2, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  it.each(Object.keys(BROKEN_UPDATES) as Array<keyof typeof BROKEN_UPDATES>)('the comparison catches an update that %s', (name) => {
    const update = (index: OAuth2Index, changes: readonly AppliedChange[], rows: (s: string, id: string) => ConfigRow | undefined) => updateOAuth2Index(index, BROKEN_UPDATES[name](changes), rows);
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, { ...oauth2, update }, seed, 250).divergence !== null)).toBe(true);
  });
});
