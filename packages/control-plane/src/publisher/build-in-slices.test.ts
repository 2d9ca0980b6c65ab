import { describe, expect, it } from '@jest/globals';
import { buildSnapshot, emptyConfig, type SnapshotConfig } from '@gatehouse/core';
import { buildSnapshotInSlices } from './build-in-slices';

describe('buildSnapshotInSlices', () => {
  it('builds the snapshot buildSnapshot builds, hash for hash', async () => {
    const consumers = Array.from({ length: 2500 }, (_, i) => ({ id: `c-${i}`, username: `user-${i}`, created_at: 1 }));
    const rows = {
      consumers,
      credentials: { keyauth_credentials: consumers.map((c, i) => ({ id: `k-${i}`, key: `key-${i}`, consumer: { id: c.id } })) },
      services: [{ id: 's-1', name: 'one', host: 'example.org' }],
    };
    const config: SnapshotConfig = { ...emptyConfig(), ...(JSON.parse(JSON.stringify(rows)) as Partial<SnapshotConfig>) };
    expect(await buildSnapshotInSlices(7, config, 1234)).toEqual(buildSnapshot(7, config, 1234));
    expect(await buildSnapshotInSlices(1, emptyConfig(), 5)).toEqual(buildSnapshot(1, emptyConfig(), 5));
  });
});
