import { describe, expect, it } from '@jest/globals';
import { ConfigState, emptyConfig, type ConfigRow, type SnapshotConfig } from '@gatehouse/core';
import { basicAuthIndex } from './credential-index';
import { VerifiedCredentialCache } from './verified-cache';

// deltas against a rebuild, for every declared index: shared/credential-index.test.ts
describe('basic-auth index updated by deltas', () => {
  it('forgets the passwords verified for a credential that changes or goes, and keeps the others', () => {
    const consumer = { id: 'c-1', username: 'alice', custom_id: null, tags: null, created_at: 1, updated_at: 1 };
    const row = (id: string, username: string, hash: string): ConfigRow & { consumer: { id: string } } => ({ id, consumer: { id: consumer.id }, username, password: hash });
    const config: SnapshotConfig = { ...emptyConfig(), consumers: [consumer], credentials: { basicauth_credentials: [row('b-1', 'ann', 'h1'), row('b-2', 'bob', 'h2')] } };
    const state = ConfigState.fromSnapshot({ format: 1, version: 0, created_at: 0, hash: '', hashes: {} as never, config });
    const index = basicAuthIndex.compile(config);
    const ann = VerifiedCredentialCache.keyOf('ann', 'pw', 'h1');
    const bob = VerifiedCredentialCache.keyOf('bob', 'pw', 'h2');
    index.verified.add(ann, 'ann');
    index.verified.add(bob, 'bob');
    const rows = (section: string, id: string) => state.get(section, id);
    const key = 'credentials/basicauth_credentials';
    // ann's password changes: her entry is forgotten, bob's stays
    expect(basicAuthIndex.updateIndex(index, [{ key, id: 'b-1', before: row('b-1', 'ann', 'h1'), after: row('b-1', 'ann', 'h3') }], rows)).toBe(true);
    expect([index.verified.has(ann), index.verified.has(bob), index.verified.size]).toEqual([false, true, 1]);
    // bob goes
    expect(basicAuthIndex.updateIndex(index, [{ key, id: 'b-2', before: row('b-2', 'bob', 'h2') }], rows)).toBe(true);
    expect([index.verified.has(bob), index.verified.size, index.byUsername.has('bob')]).toEqual([false, 0, false]);
  });
});
