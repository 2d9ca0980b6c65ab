import { describe, expect, it } from '@jest/globals';
import type { AppliedChange } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { ACL_INDEX_SECTIONS, buildAclIndex, updateAclIndex, type AclIndex } from './group-index';

const kind: CredentialKind = { entity: 'acls', nameField: null, fields: (random) => ({ group: `g${Math.floor(random() * 4)}` }) };

const acl: IndexUnderTest<AclIndex> = {
  compile: buildAclIndex,
  update: (index, changes) => updateAclIndex(index, changes),
  sections: ACL_INDEX_SECTIONS,
  normalise: (index) => ({
    byConsumer: sortedEntries(index.byConsumer, (g) => ({ groups: [...g.groups], header: g.header })),
    rowsByConsumer: sortedEntries(index.rowsByConsumer, (rows) => rows),
  }),
};

describe('acl index updated by deltas', () => {
  it('equals the index compiled from the resulting config after every random delta (groups in snapshot order)', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, acl, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  // acl reads no consumer rows: a consumer's ACLs go by the cascade's deletes
  it.each(['skips deleted credentials', 'ignores what a changed row was'] as const)('the comparison catches an update that %s', (name) => {
    const update = (index: AclIndex, changes: readonly AppliedChange[]) => updateAclIndex(index, BROKEN_UPDATES[name](changes));
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, { ...acl, update }, seed, 250).divergence !== null)).toBe(true);
  });
});
