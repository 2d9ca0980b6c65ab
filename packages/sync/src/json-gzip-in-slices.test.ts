import { describe, expect, it } from '@jest/globals';
import { gunzipSync } from 'node:zlib';
import { gzipJsonInSlices } from './json-gzip-in-slices';

describe('gzipJsonInSlices', () => {
  it('compresses exactly the text JSON.stringify gives', async () => {
    const row = (i: number) => ({ id: `id-${i}`, username: `user-${i}`, tags: ['a', 'b'], gone: undefined, nested: { list: [1, { deep: [2] }] } });
    const values: object[] = [
      {},
      [],
      { format: 1, version: 3, created_at: 1, hash: 'h', config: { services: [row(1), undefined], credentials: { keyauth_credentials: Array.from({ length: 3000 }, (_, i) => row(i)) } }, epoch: undefined },
      { format: 'delta', changes: { 'credentials/keyauth_credentials': { upsert: [row(1)], delete: ['x'] } }, fn: () => 1, when: new Date(0) },
      { text: 'é "quoted" \u2028 😀', n: null, b: false },
    ];
    for (const value of values) {
      expect(gunzipSync(await gzipJsonInSlices(value)).toString('utf8')).toBe(JSON.stringify(value));
    }
  });

  it('gives the event loop turns while a large value is compressed', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: `id-${i}`, tags: ['x'.repeat(100)] }));
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      const text = gunzipSync(await gzipJsonInSlices({ config: { consumers: rows } })).toString('utf8');
      expect(JSON.parse(text)).toEqual({ config: { consumers: rows } });
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });
});
