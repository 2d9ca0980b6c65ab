import { addDigest, combineSectionHashes, entityDigest, SNAPSHOT_SECTIONS, sumToHex, type Snapshot, type SnapshotConfig, type SnapshotSection } from '@gatehouse/core';
import { nextTurn, SliceCounter } from '../declarative/slices';

/** rows digested between two turns of the event loop */
const DIGESTS_PER_SLICE = 1000;

/**
 * `buildSnapshot` (core) with the section hashes computed in slices: the digests of 200,000 rows (100,000 consumers
 * and their keys) hold up the event loop for seconds, and the admin API answers meanwhile (decision 26). The same
 * snapshot, hash for hash.
 */
export async function buildSnapshotInSlices(version: number, config: SnapshotConfig, now = Math.floor(Date.now() / 1000)): Promise<Snapshot> {
  const slice = new SliceCounter(DIGESTS_PER_SLICE);
  const hashes = {} as Record<SnapshotSection, string>;
  for (const section of SNAPSHOT_SECTIONS) {
    let sum = 0n;
    const lists: Array<[string, readonly unknown[]]> =
      section === 'credentials' ? Object.entries(config.credentials ?? {}) : [[section, (config[section] ?? []) as readonly unknown[]]];
    for (const [entity, rows] of lists) {
      for (const row of rows) {
        if (slice.full()) await nextTurn();
        sum = addDigest(sum, entityDigest(entity, row));
      }
    }
    hashes[section] = sumToHex(sum);
  }
  return { format: 1, version, created_at: now, hash: combineSectionHashes(hashes), hashes, config };
}
