import { describe, expect, it } from '@jest/globals';
import type { AppliedChange, ConfigRow } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, outcomeOf, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { buildHmacAuthIndex, HMAC_AUTH_INDEX_SECTIONS, updateHmacAuthIndex, type HmacAuthIndex } from './credential-index';

const kind: CredentialKind = { entity: 'hmacauth_credentials', nameField: 'username', fields: (_random, n) => ({ secret: `secret-${n}` }) };

const hmacAuth: IndexUnderTest<HmacAuthIndex> = {
  compile: buildHmacAuthIndex,
  update: updateHmacAuthIndex,
  sections: HMAC_AUTH_INDEX_SECTIONS,
  normalise: (index) => sortedEntries(index.byUsername, (e) => ({ secret: e.secret.toString('utf8'), ...(outcomeOf(e.result) as object) })),
};

describe('hmac-auth index updated by deltas', () => {
  it('equals the index compiled from the resulting config after every random delta', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, hmacAuth, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  it.each(Object.keys(BROKEN_UPDATES) as Array<keyof typeof BROKEN_UPDATES>)('the comparison catches an update that %s', (name) => {
    const update = (index: HmacAuthIndex, changes: readonly AppliedChange[], rows: (s: string, id: string) => ConfigRow | undefined) => updateHmacAuthIndex(index, BROKEN_UPDATES[name](changes), rows);
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, { ...hmacAuth, update }, seed, 250).divergence !== null)).toBe(true);
  });
});
