import { describe, expect, it } from '@jest/globals';
import type { AppliedChange, ConfigRow } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, outcomeOf, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { buildJwtIndex, JWT_INDEX_SECTIONS, updateJwtIndex, type JwtIndex } from './credential-index';

const ALGORITHMS = ['HS256', 'HS384', 'RS256', 'not-an-algorithm'];

const kind: CredentialKind = {
  entity: 'jwt_secrets',
  nameField: 'key',
  fields: (random, n) => ({ algorithm: ALGORITHMS[Math.floor(random() * ALGORITHMS.length)], secret: random() < 0.8 ? `secret-${n}` : null, rsa_public_key: null }),
};

const jwt: IndexUnderTest<JwtIndex> = {
  compile: buildJwtIndex,
  update: updateJwtIndex,
  sections: JWT_INDEX_SECTIONS,
  normalise: (index) =>
    sortedEntries(index.byKey, (c) => ({ algorithm: c.algorithm, secret: c.hmacSecret(false)?.toString('utf8') ?? null, ...(outcomeOf(c.result) as object) })),
};

describe('jwt index updated by deltas', () => {
  it('equals the index compiled from the resulting config after every random delta', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, jwt, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  it.each(Object.keys(BROKEN_UPDATES) as Array<keyof typeof BROKEN_UPDATES>)('the comparison catches an update that %s', (name) => {
    const update = (index: JwtIndex, changes: readonly AppliedChange[], rows: (s: string, id: string) => ConfigRow | undefined) => updateJwtIndex(index, BROKEN_UPDATES[name](changes), rows);
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, { ...jwt, update }, seed, 250).divergence !== null)).toBe(true);
  });
});
