import { describe, expect, it } from '@jest/globals';
import bcryptjs from 'bcryptjs';
import { emptyConfig, type SnapshotConfig } from '@gatehouse/core';
import { basicAuthIndex, dummyCostOf } from './credential-index';
import { hashPassword as prepareCredential } from './entities';
import { costOf, hashPassword, PASSWORD_COST, spendDummyWork, verifyPassword } from './password';
import { VerifiedCredentialCache } from './verified-cache';

describe('basic-auth password hashing (native bcrypt)', () => {
  it('stores $2b$ hashes at cost 10 that any bcrypt implementation verifies', async () => {
    const stored = (await prepareCredential({ username: 'u', password: 'pw' }, null)).password as string;
    expect(stored).toMatch(/^\$2b\$10\$/);
    expect(bcryptjs.compareSync('pw', stored)).toBe(true);
    expect(await verifyPassword('pw', stored)).toBe(true);
    expect(await verifyPassword('nope', stored)).toBe(false);
  });

  it('verifies $2a$, $2b$ and $2y$ hashes made elsewhere', async () => {
    const made = bcryptjs.hashSync('secret', 4);
    const rest = made.slice(4);
    for (const variant of ['2a', '2b', '2y']) {
      expect(await verifyPassword('secret', `$${variant}$${rest}`)).toBe(true);
      expect(await verifyPassword('Secret', `$${variant}$${rest}`)).toBe(false);
    }
  });

  it('treats a stored value that is not a bcrypt hash as a mismatch, not an error', async () => {
    await expect(verifyPassword('x', 'not-a-hash')).resolves.toBe(false);
    await expect(verifyPassword('x', '')).resolves.toBe(false);
  });

  it('reads the cost of a hash', async () => {
    expect(costOf(await hashPassword('p', 5))).toBe(5);
    expect(costOf('plain')).toBeNull();
  });

  it('does dummy work at any cost, and never succeeds', async () => {
    await expect(spendDummyWork('whatever', 4)).resolves.toBeUndefined();
    await expect(spendDummyWork('whatever', PASSWORD_COST)).resolves.toBeUndefined();
  });

  it('compares unknown usernames at the cost most stored hashes have', async () => {
    const consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'c', custom_id: null, tags: null, created_at: 1, updated_at: 1 };
    const rows = await Promise.all(
      [5, 5, 4].map(async (cost, i) => ({ id: `b-${i}`, consumer: { id: consumer.id }, username: `u${i}`, password: await hashPassword('pw', cost) })),
    );
    const config: SnapshotConfig = { ...emptyConfig(), consumers: [consumer], credentials: { basicauth_credentials: rows } };
    expect(dummyCostOf(basicAuthIndex.compile(config))).toBe(5);
    // a tie goes to the higher cost
    const tied = { ...config, credentials: { basicauth_credentials: [rows[2]!, rows[1]!] } };
    expect(dummyCostOf(basicAuthIndex.compile(tied))).toBe(5);
    expect(dummyCostOf(basicAuthIndex.compile(emptyConfig()))).toBe(PASSWORD_COST);
  });
});

describe('verified credential cache (LRU)', () => {
  it('keeps the entries used most recently', () => {
    const cache = new VerifiedCredentialCache(2);
    cache.add('a');
    cache.add('b');
    expect(cache.has('a')).toBe(true); // a is now the newest
    cache.add('c'); // evicts b, the least recently used
    expect([cache.has('a'), cache.has('b'), cache.has('c'), cache.size]).toEqual([true, false, true, 2]);
  });
});
