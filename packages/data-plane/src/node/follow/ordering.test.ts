import { describe, expect, it } from '@jest/globals';
import { newEpoch, type SnapshotAnnouncement } from '@gatehouse/core';
import { deltaPlace, onAnnouncement, onDelta, onKeptDeltas, onSnapshot, onStoredHead } from './ordering';

const A = newEpoch(null, 1_760_000_000_000);
const B = newEpoch(null, 1_760_000_000_001);
const at = (version: number, epoch: string | null = A) => ({ version, epoch });
const delta = (from: number, version: number, epoch: string | null = A) => ({ from, version, epoch });

const node = { followsDeltas: true, rebuilding: false, cacheUnsealed: false };
const announced = (version: number, hash: string, extra: Partial<SnapshotAnnouncement> = {}) => ({ version, hash, epoch: A, ...extra }) as SnapshotAnnouncement;

describe('an announcement', () => {
  it.each([
    ['with a delta, on a node following deltas', announced(5, 'h5', { delta: { ...delta(4, 5), hash: 'h5' } as never }), node, { do: 'apply-delta' }],
    ['with a delta, while a full load is due', announced(5, 'h5', { delta: { ...delta(4, 5), hash: 'h5' } as never }), { ...node, rebuilding: true }, { do: 'fetch' }],
    ['with a delta, on a node without deltas', announced(5, 'h5', { delta: { ...delta(4, 5), hash: 'h5' } as never }), { ...node, followsDeltas: false }, { do: 'fetch' }],
    ['of a newer version', announced(5, 'h5'), node, { do: 'fetch' }],
    ['of a newer version with the serving content', announced(5, 'h4'), node, { do: 'ignore', why: 'same hash' }],
    ['of the serving version', announced(4, 'h4'), node, { do: 'ignore', why: 'not newer' }],
    ['of the serving version, held in clear on disk', announced(4, 'h4'), { ...node, cacheUnsealed: true }, { do: 'fetch' }],
    ['of an older version', announced(3, 'h3'), node, { do: 'ignore', why: 'not newer' }],
    ['of an older epoch', announced(90, 'h90', { epoch: newEpoch(null, 1_700_000_000_000) }), node, { do: 'ignore', why: 'not newer' }],
    ['of a newer epoch with the serving content', announced(1, 'h4', { epoch: B }), node, { do: 'fetch' }],
  ] as const)('%s', (_what, announcement, state, expected) => {
    expect(onAnnouncement(announcement, { position: at(4), hash: 'h4' }, state)).toEqual(expected);
  });

  it('of anything, while nothing is served, is fetched', () => {
    expect(onAnnouncement(announced(1, 'h1'), { position: null, hash: null }, node)).toEqual({ do: 'fetch' });
  });
});

describe('a delta', () => {
  it.each([
    ['that applies to the serving version', delta(4, 5), at(4), 'next', 'apply'],
    ['that starts before the serving version and ends after it', delta(3, 5), at(4), 'next', 'apply'],
    ['that the serving config holds', delta(3, 4), at(4), 'stale', 'ignore'],
    ['a duplicate of an older one', delta(1, 2), at(4), 'stale', 'ignore'],
    ['after a missing one', delta(5, 6), at(4), 'gap', 'fetch'],
    ['of another epoch', delta(4, 5, B), at(4), 'gap', 'fetch'],
    ['while nothing is served', delta(0, 1), null, 'gap', 'fetch'],
    ['of no epoch, on a node serving no epoch', delta(4, 5, null), at(4, null), 'next', 'apply'],
  ] as const)('%s', (_what, d, serving, place, action) => {
    expect(deltaPlace(d, serving)).toBe(place);
    expect(onDelta(d, serving)).toBe(action);
  });
});

describe("the bus's stored snapshot", () => {
  it.each([
    ['while nothing is served', at(3), null, false, 'load-full'],
    ['of a newer epoch', at(1, B), at(4), false, 'load-full'],
    ['after a delta that did not apply', at(4), at(4), true, 'load-full'],
    ['of an older epoch', at(9, newEpoch(null, 1_700_000_000_000)), at(4), false, 'keep-serving'],
    ['of a newer version', at(9), at(4), false, 'follow-deltas'],
    ['of the serving version', at(4), at(4), false, 'follow-deltas'],
  ] as const)('%s', (_what, head, serving, rebuilding, expected) => {
    expect(onStoredHead(head, serving, rebuilding)).toBe(expected);
  });
});

describe('the deltas kept after the serving version', () => {
  it.each([
    ['continue it', [delta(4, 5), delta(5, 6)], at(6), 'apply-chain'],
    ['start before it', [delta(2, 3), delta(3, 4), delta(4, 5)], at(5), 'apply-chain'],
    ['start after it, with a newer snapshot stored', [delta(7, 8)], at(8), 'load-full'],
    ['are missing, with a newer snapshot stored', [], at(8), 'load-full'],
    ['start after it, with the serving snapshot stored', [delta(7, 8)], at(4), 'retry'],
    ['are none, and nothing newer is stored', [], at(4), 'up-to-date'],
    ['are of another epoch', [delta(4, 5, B)], at(4), 'retry'],
  ] as const)('%s', (_what, kept, head, expected) => {
    expect(onKeptDeltas(kept, at(4), head)).toBe(expected);
  });
});

describe('a full snapshot offered to the node', () => {
  const serving = { position: at(4), hash: 'h4', epoch: A };
  it.each([
    ['older', { ...at(3), hash: 'h3' }, false, { do: 'keep-serving', why: 'older' }],
    ['of an older epoch', { ...at(9, newEpoch(null, 1_700_000_000_000)), hash: 'h9' }, false, { do: 'keep-serving', why: 'older' }],
    ['the serving one', { ...at(4), hash: 'h4' }, false, { do: 'keep-serving', why: 'same' }],
    ['newer, with the serving content', { ...at(5), hash: 'h4' }, false, { do: 'relabel' }],
    ['newer', { ...at(5), hash: 'h5' }, false, { do: 'load', newEpoch: false }],
    ['of a newer epoch, with the serving content', { ...at(1, B), hash: 'h4' }, false, { do: 'load', newEpoch: true }],
    ['the serving one, as a rebuild', { ...at(4), hash: 'h4' }, true, { do: 'load', newEpoch: true }],
    ['older, as a rebuild of the same epoch', { ...at(3), hash: 'h3' }, true, { do: 'load', newEpoch: true }],
  ] as const)('%s', (_what, snapshot, rebuilding, expected) => {
    expect(onSnapshot(snapshot, serving, rebuilding)).toEqual(expected);
  });

  it('anything, while nothing is served, is loaded', () => {
    expect(onSnapshot({ ...at(1), hash: 'h1' }, { position: null, hash: null, epoch: null }, false)).toEqual({ do: 'load', newEpoch: false });
  });
});
