import { describe, expect, it } from '@jest/globals';
import { ConfigState, emptyConfig, type AppliedChange, type ConfigRow, type SnapshotConfig } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, outcomeOf, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { BASIC_AUTH_INDEX_SECTIONS, buildBasicAuthIndex, updateBasicAuthIndex, type BasicAuthIndex } from './credential-index';
import { VerifiedCredentialCache } from './verified-cache';

const HASH_CHARS = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A string of the stored-hash form with the given cost (the index reads the cost, never checks a password). */
function fakeHash(cost: number, random: () => number): string {
  const body = Array.from({ length: 53 }, () => HASH_CHARS[Math.floor(random() * HASH_CHARS.length)]).join('');
  return `$2b$${String(cost).padStart(2, '0')}$${body}`;
}

const kind: CredentialKind = {
  entity: 'basicauth_credentials',
  nameField: 'username',
  fields: (random) => ({ password: fakeHash(4 + Math.floor(random() * 3), random) }),
};

const basicAuth: IndexUnderTest<BasicAuthIndex> = {
  compile: buildBasicAuthIndex,
  update: updateBasicAuthIndex,
  sections: BASIC_AUTH_INDEX_SECTIONS,
  normalise: (index) => ({
    byUsername: sortedEntries(index.byUsername, (e) => ({ hash: e.passwordHash, ...(outcomeOf(e.result) as object) })),
    costCounts: sortedEntries(index.costCounts, (n) => n),
    dummyCost: index.dummyCost,
  }),
};

describe('basic-auth index updated by deltas', () => {
  it('equals the index compiled from the resulting config after every random delta', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, basicAuth, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  it.each(Object.keys(BROKEN_UPDATES) as Array<keyof typeof BROKEN_UPDATES>)('the comparison catches an update that %s', (name) => {
    const broken = { ...basicAuth, update: (index: BasicAuthIndex, changes: readonly AppliedChange[], rows: (s: string, id: string) => ConfigRow | undefined) => updateBasicAuthIndex(index, BROKEN_UPDATES[name](changes), rows) };
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, broken, seed, 250).divergence !== null)).toBe(true);
  });

  it('forgets the passwords verified for a credential that changes or goes, and keeps the others', () => {
    const consumer = { id: 'c-1', username: 'alice', custom_id: null, tags: null, created_at: 1, updated_at: 1 };
    const row = (id: string, username: string, hash: string): ConfigRow & { consumer: { id: string } } => ({ id, consumer: { id: consumer.id }, username, password: hash });
    const config: SnapshotConfig = { ...emptyConfig(), consumers: [consumer], credentials: { basicauth_credentials: [row('b-1', 'ann', 'h1'), row('b-2', 'bob', 'h2')] } };
    const state = ConfigState.fromSnapshot({ format: 1, version: 0, created_at: 0, hash: '', hashes: {} as never, config });
    const index = buildBasicAuthIndex(config);
    const ann = VerifiedCredentialCache.keyOf('ann', 'pw', 'h1');
    const bob = VerifiedCredentialCache.keyOf('bob', 'pw', 'h2');
    index.verified.add(ann, 'ann');
    index.verified.add(bob, 'bob');
    const rows = (section: string, id: string) => state.get(section, id);
    const key = 'credentials/basicauth_credentials';
    // ann's password changes: her entry is forgotten, bob's stays
    expect(updateBasicAuthIndex(index, [{ key, id: 'b-1', before: row('b-1', 'ann', 'h1'), after: row('b-1', 'ann', 'h3') }], rows)).toBe(true);
    expect([index.verified.has(ann), index.verified.has(bob), index.verified.size]).toEqual([false, true, 1]);
    // bob goes
    expect(updateBasicAuthIndex(index, [{ key, id: 'b-2', before: row('b-2', 'bob', 'h2') }], rows)).toBe(true);
    expect([index.verified.has(bob), index.verified.size, index.byUsername.has('bob')]).toEqual([false, 0, false]);
  });
});
