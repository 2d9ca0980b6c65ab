import { describe, expect, it } from '@jest/globals';
import { newEpoch, type SnapshotAnnouncement } from '@gatehouse/core';
import { SEAL_CIPHER } from '@gatehouse/sync';
import { next, type DeltaPosition, type SyncAction, type SyncEvent, type SyncState } from './ordering';

const A = newEpoch(null, 1_760_000_000_000);
const B = newEpoch(null, 1_760_000_000_001);
const OLD = newEpoch(null, 1_700_000_000_000);
const at = (version: number, epoch: string | null = A) => ({ version, epoch });
const delta = (from: number, version: number, epoch: string | null = A): DeltaPosition => ({ from, version, epoch });
const announced = (version: number, hash: string, extra: Partial<SnapshotAnnouncement> = {}) => ({ version, hash, epoch: A, ...extra }) as SnapshotAnnouncement;
const withDelta = (d: DeltaPosition, hash: string) => announced(d.version, hash, { epoch: d.epoch ?? undefined, delta: { ...d, hash } as never });

/** a node serving version 4 (hash h4) of epoch A, following deltas */
const node = (mode: Partial<SyncState> = {}): SyncState => ({ serving: { position: at(4), hash: 'h4' }, followsDeltas: true, rebuilding: false, cacheUnsealed: false, ...mode });
const empty = (mode: Partial<SyncState> = {}) => node({ serving: { position: null, hash: null }, ...mode });
const noDeltas = node({ followsDeltas: false });
const rebuilding = node({ rebuilding: true });
const unsealedCache = node({ cacheUnsealed: true });

const on = {
  announcement: (announcement: SnapshotAnnouncement): SyncEvent => ({ on: 'announcement', announcement }),
  delta: (d: DeltaPosition): SyncEvent => ({ on: 'delta', delta: d }),
  storedVersion: (head: SnapshotAnnouncement): SyncEvent => ({ on: 'stored-version', head }),
  storedHead: (version: number, epoch: string | null = A, cipher?: string): SyncEvent => ({ on: 'stored-head', head: { version, epoch, cipher } }),
  keptDeltas: (kept: DeltaPosition[], head = at(4)): SyncEvent => ({ on: 'kept-deltas', kept, head }),
  snapshot: (version: number, hash: string, epoch: string | null = A): SyncEvent => ({ on: 'snapshot', snapshot: { version, hash, epoch } }),
  snapshotLoaded: (version: number): SyncEvent => ({ on: 'snapshot-loaded', version }),
  chainRefused: (stage: 'announced' | 'kept' | 'after-load'): SyncEvent => ({ on: 'chain-refused', stage }),
};

const FETCH: SyncAction = { do: 'fetch' };
const APPLY_DELTA: SyncAction = { do: 'apply-delta' };
const NOT_NEWER: SyncAction = { do: 'ignore', why: 'not newer' };
const SAME_HASH: SyncAction = { do: 'ignore', why: 'same hash' };
const STALE_DELTA: SyncAction = { do: 'ignore', why: 'stale delta' };
const LOAD_FULL: SyncAction = { do: 'load-full', rebuild: false };
const REBUILD: SyncAction = { do: 'load-full', rebuild: true };

const rules: Array<[string, SyncState, SyncEvent, SyncAction[]]> = [
  // an announcement
  ['an announced delta that follows the serving version is applied', node(), on.announcement(withDelta(delta(4, 5), 'h5')), [APPLY_DELTA]],
  ['an announced delta the serving config holds is ignored', node(), on.announcement(withDelta(delta(3, 4), 'h4')), [STALE_DELTA]],
  ['an announced delta after a missing one fetches', node(), on.announcement(withDelta(delta(5, 6), 'h6')), [FETCH]],
  ['an announced delta, while a full load is due, fetches', rebuilding, on.announcement(withDelta(delta(4, 5), 'h5')), [FETCH]],
  ['an announced delta, on a node without deltas, fetches', noDeltas, on.announcement(withDelta(delta(4, 5), 'h5')), [FETCH]],
  ['an announced newer version fetches', node(), on.announcement(announced(5, 'h5')), [FETCH]],
  ['an announced newer version with the serving content is ignored', node(), on.announcement(announced(5, 'h4')), [SAME_HASH]],
  ['an announced serving version is ignored', node(), on.announcement(announced(4, 'h4')), [NOT_NEWER]],
  ['an announced serving version, held in clear on disk, fetches', unsealedCache, on.announcement(announced(4, 'h4')), [FETCH]],
  ['an announced older version is ignored', node(), on.announcement(announced(3, 'h3')), [NOT_NEWER]],
  ['an announced older epoch is ignored', node(), on.announcement(announced(90, 'h90', { epoch: OLD })), [NOT_NEWER]],
  ['an announced newer epoch with the serving content fetches', node(), on.announcement(announced(1, 'h4', { epoch: B })), [FETCH]],
  ['an announcement, while nothing is served, fetches', empty(), on.announcement(announced(1, 'h1')), [FETCH]],
  // a delta
  ['a delta that applies to the serving version is applied', node(), on.delta(delta(4, 5)), [APPLY_DELTA]],
  ['a delta that starts before the serving version and ends after it is applied', node(), on.delta(delta(3, 5)), [APPLY_DELTA]],
  ['a delta the serving config holds is ignored', node(), on.delta(delta(3, 4)), [STALE_DELTA]],
  ['a duplicate of an older delta is ignored', node(), on.delta(delta(1, 2)), [STALE_DELTA]],
  ['a delta after a missing one fetches', node(), on.delta(delta(5, 6)), [FETCH]],
  ['a delta of another epoch fetches', node(), on.delta(delta(4, 5, B)), [FETCH]],
  ['a delta, while nothing is served, fetches', empty(), on.delta(delta(0, 1)), [FETCH]],
  ['a delta of no epoch, on a node serving no epoch, is applied', node({ serving: { position: at(4, null), hash: 'h4' } }), on.delta(delta(4, 5, null)), [APPLY_DELTA]],
  // the periodic check's stored version
  ['a stored newer version fetches', node(), on.storedVersion(announced(5, 'h5')), [FETCH]],
  ['a stored newer version with the serving content is ignored', node(), on.storedVersion(announced(5, 'h4')), [SAME_HASH]],
  ['a stored newer epoch fetches', node(), on.storedVersion(announced(1, 'h1', { epoch: B })), [FETCH]],
  ['the stored serving version is ignored', node(), on.storedVersion(announced(4, 'h4')), [NOT_NEWER]],
  ['the stored serving version, held in clear on disk, is left to announcements', unsealedCache, on.storedVersion(announced(4, 'h4')), [NOT_NEWER]],
  ['a stored older version is ignored', node(), on.storedVersion(announced(3, 'h3')), [NOT_NEWER]],
  // the bus's stored snapshot, fetched
  ['the stored serving version sealed, held in clear on disk, reseals the cache', unsealedCache, on.storedHead(4, A, SEAL_CIPHER), [{ do: 'reseal' }]],
  ['the stored serving version unsealed, held in clear on disk, follows the kept deltas', unsealedCache, on.storedHead(4), [{ do: 'fetch-deltas', after: 4 }]],
  ['a stored newer version sealed, held in clear on disk, follows the kept deltas', unsealedCache, on.storedHead(5, A, SEAL_CIPHER), [{ do: 'fetch-deltas', after: 4 }]],
  ['the stored snapshot, on a node without deltas, is loaded', noDeltas, on.storedHead(5), [LOAD_FULL]],
  ['the stored snapshot, on a node without deltas, is loaded even when older (the load refuses it)', noDeltas, on.storedHead(3), [LOAD_FULL]],
  ['the stored snapshot, while nothing is served, is loaded', empty(), on.storedHead(3), [LOAD_FULL]],
  ['a stored newer epoch is loaded', node(), on.storedHead(1, B), [LOAD_FULL]],
  ['the stored snapshot, after a delta that did not apply, is loaded as a rebuild', rebuilding, on.storedHead(4), [REBUILD]],
  ['a stored older epoch keeps the serving config', node(), on.storedHead(9, OLD), [{ do: 'keep-serving', why: 'older' }]],
  ['a stored newer version follows the kept deltas', node(), on.storedHead(9), [{ do: 'fetch-deltas', after: 4 }]],
  ['the stored serving version follows the kept deltas', node(), on.storedHead(4), [{ do: 'fetch-deltas', after: 4 }]],
  // the deltas kept after the serving version
  ['kept deltas that continue the serving version are applied', node(), on.keptDeltas([delta(4, 5), delta(5, 6)], at(6)), [{ do: 'apply-chain' }]],
  ['kept deltas that start before the serving version are applied', node(), on.keptDeltas([delta(2, 3), delta(3, 4), delta(4, 5)], at(5)), [{ do: 'apply-chain' }]],
  ['kept deltas that start after it, with a newer snapshot stored, load it', node(), on.keptDeltas([delta(7, 8)], at(8)), [LOAD_FULL]],
  ['missing kept deltas, with a newer snapshot stored, load it', node(), on.keptDeltas([], at(8)), [LOAD_FULL]],
  ['missing kept deltas, with a newer snapshot stored, while rebuilding, load it as a rebuild', rebuilding, on.keptDeltas([], at(8)), [REBUILD]],
  [
    'kept deltas that start after it, with the serving snapshot stored, are fetched again later',
    node(),
    on.keptDeltas([delta(7, 8)], at(4)),
    [{ do: 'retry', error: 'kept deltas start at 7, after the serving version 4' }],
  ],
  ['no kept deltas, and nothing newer stored: up to date', node(), on.keptDeltas([], at(4)), [{ do: 'ignore', why: 'up to date' }]],
  ['kept deltas of another epoch are fetched again later', node(), on.keptDeltas([delta(4, 5, B)], at(4)), [{ do: 'retry', error: `kept deltas are of epoch ${B}, not the serving one` }]],
  ['kept deltas, while nothing is served, load the stored snapshot', empty(), on.keptDeltas([delta(0, 1)], at(4)), [LOAD_FULL]],
  // a full snapshot offered to the node
  ['an older snapshot is refused', node(), on.snapshot(3, 'h3'), [{ do: 'keep-serving', why: 'older' }]],
  ['a snapshot of an older epoch is refused', node(), on.snapshot(9, 'h9', OLD), [{ do: 'keep-serving', why: 'older' }]],
  ['the serving snapshot is nothing to do', node(), on.snapshot(4, 'h4'), [{ do: 'keep-serving', why: 'same' }]],
  ['a newer snapshot with the serving content moves the label', node(), on.snapshot(5, 'h4'), [{ do: 'relabel' }]],
  ['a newer snapshot is loaded', node(), on.snapshot(5, 'h5'), [{ do: 'load', newEpoch: false }]],
  ['a snapshot of a newer epoch with the serving content is loaded', node(), on.snapshot(1, 'h4', B), [{ do: 'load', newEpoch: true }]],
  ['the serving snapshot, as a rebuild, is loaded', rebuilding, on.snapshot(4, 'h4'), [{ do: 'load', newEpoch: true }]],
  ['an older snapshot, as a rebuild of the same epoch, is loaded', rebuilding, on.snapshot(3, 'h3'), [{ do: 'load', newEpoch: true }]],
  ['an older epoch, as a rebuild, is refused', rebuilding, on.snapshot(9, 'h9', OLD), [{ do: 'keep-serving', why: 'older' }]],
  ['a snapshot, while nothing is served, is loaded', empty(), on.snapshot(1, 'h1'), [{ do: 'load', newEpoch: false }]],
  // a full load done
  ['a full load catches up with the deltas kept after the serving version', node(), on.snapshotLoaded(3), [{ do: 'catch-up', after: 4 }]],
  ['a full load that left nothing served catches up after the loaded version', empty(), on.snapshotLoaded(3), [{ do: 'catch-up', after: 3 }]],
  ['a full load, on a node without deltas, is the end', noDeltas, on.snapshotLoaded(5), []],
  // deltas refused (a gap, or one that did not apply)
  ['an announced delta refused fetches', node(), on.chainRefused('announced'), [FETCH]],
  ['kept deltas refused load the stored snapshot', node(), on.chainRefused('kept'), [LOAD_FULL]],
  ['kept deltas refused, one not applying, load the stored snapshot as a rebuild', rebuilding, on.chainRefused('kept'), [REBUILD]],
  ['deltas after a full load refused are fetched again later', node(), on.chainRefused('after-load'), [{ do: 'retry' }]],
];

describe('the ordering rules', () => {
  it.each(rules)('%s', (_what, state, event, expected) => {
    expect(next(state, event)).toEqual(expected);
  });

  it('cover every event', () => {
    const events = new Set(rules.map(([, , event]) => event.on));
    expect([...events].sort()).toEqual(['announcement', 'chain-refused', 'delta', 'kept-deltas', 'snapshot', 'snapshot-loaded', 'stored-head', 'stored-version']);
  });
});
