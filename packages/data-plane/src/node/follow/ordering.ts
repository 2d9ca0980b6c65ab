// The data plane's ordering rules, as pure decisions: what it does with an announcement, a delta, the bus's stored
// snapshot and the deltas kept after it, given what it serves. DataPlaneSync carries the decisions out (verify,
// compile, swap, cache, fetch); the rules themselves touch nothing and are tested with tables.
import type { SnapshotAnnouncement } from '@gatehouse/core';
import { succession, type ConfigPosition, type Succession } from '@gatehouse/sync';

/** What a data plane serves: its position (null while nothing is loaded) and the content hash. */
export interface Serving {
  position: ConfigPosition | null;
  hash: string | null;
}

/** A delta's place: `from` is the version it applies to. */
export interface DeltaPosition extends ConfigPosition {
  from: number;
}

export type AnnouncementAction =
  | { do: 'apply-delta' }
  | { do: 'fetch' }
  | { do: 'ignore'; why: 'not newer' | 'same hash' };

/**
 * An announcement: its delta is applied when the node follows deltas and is not waiting for a full load; otherwise
 * the stored snapshot is fetched when the announced config follows the serving one with other content, or when the
 * serving version is held in clear on disk (the bus may now have it sealed).
 */
export function onAnnouncement(
  announcement: SnapshotAnnouncement,
  serving: Serving,
  node: { followsDeltas: boolean; rebuilding: boolean; cacheUnsealed: boolean },
): AnnouncementAction {
  if (announcement.delta && node.followsDeltas && !node.rebuilding) return { do: 'apply-delta' };
  const order = succession(announcement, serving.position);
  if (order === 'same' && node.cacheUnsealed) return { do: 'fetch' };
  if (order !== 'newer-version' && order !== 'newer-epoch') return { do: 'ignore', why: 'not newer' };
  if (order === 'newer-version' && announcement.hash === serving.hash) return { do: 'ignore', why: 'same hash' };
  return { do: 'fetch' };
}

/**
 * Where a delta stands against the serving position: `next` when it applies to it (its `from` is at or before the
 * serving version, its version after, in the same epoch), `stale` when the serving config already holds it, `gap`
 * when something is missing between the two (or nothing is served, or the epoch differs).
 */
export function deltaPlace(delta: DeltaPosition, serving: ConfigPosition | null): 'next' | 'stale' | 'gap' {
  if (serving === null || (delta.epoch ?? null) !== (serving.epoch ?? null) || delta.from > serving.version) return 'gap';
  return delta.version <= serving.version ? 'stale' : 'next';
}

/** An announced delta: applied when next, ignored when stale; a gap fetches the stored snapshot and kept deltas. */
export function onDelta(delta: DeltaPosition, serving: ConfigPosition | null): 'apply' | 'ignore' | 'fetch' {
  const place = deltaPlace(delta, serving);
  return place === 'next' ? 'apply' : place === 'stale' ? 'ignore' : 'fetch';
}

/**
 * The bus's stored snapshot (its head) against the serving config, for a node that follows deltas: load it in full
 * (nothing served, a new epoch, or a delta that did not apply), keep the serving config (an older epoch), or follow
 * the deltas kept after the serving version.
 */
export function onStoredHead(head: ConfigPosition, serving: ConfigPosition | null, rebuilding: boolean): 'load-full' | 'keep-serving' | 'follow-deltas' {
  const order = succession(head, serving);
  if (rebuilding || serving === null || order === 'newer-epoch') return 'load-full';
  return order === 'older-epoch' ? 'keep-serving' : 'follow-deltas';
}

/**
 * The deltas kept after the serving version: applied in order when they continue it; otherwise the stored snapshot is
 * loaded when it is newer, the node is up to date when nothing is kept, and kept deltas that start after the serving
 * version (the bus trimmed them while the snapshot lagged) are fetched again later.
 */
export function onKeptDeltas(kept: readonly DeltaPosition[], serving: ConfigPosition, head: ConfigPosition): 'apply-chain' | 'load-full' | 'retry' | 'up-to-date' {
  const first = kept[0];
  if (first !== undefined && first.from <= serving.version && (first.epoch ?? null) === (serving.epoch ?? null)) return 'apply-chain';
  if (succession(head, serving) === 'newer-version') return 'load-full';
  return first !== undefined ? 'retry' : 'up-to-date';
}

export type SnapshotAction =
  | { do: 'keep-serving'; why: 'older' | 'same' }
  | { do: 'relabel' }
  | { do: 'load'; newEpoch: boolean };

/**
 * A full snapshot offered to the node (from the disk cache or the bus): an older one is refused, the serving one is
 * nothing to do, a newer version with the serving content only moves the label, anything else is loaded. A rebuild
 * (after a delta that did not apply) reloads the serving epoch's snapshot even when its version is not newer.
 */
export function onSnapshot(snapshot: ConfigPosition & { hash: string }, serving: Serving & { epoch: string | null }, rebuilding: boolean): SnapshotAction {
  const order: Succession = rebuilding && (snapshot.epoch ?? null) === serving.epoch ? 'newer-epoch' : succession(snapshot, serving.position);
  if (order === 'older-version' || order === 'older-epoch') return { do: 'keep-serving', why: 'older' };
  if (order === 'same') return { do: 'keep-serving', why: 'same' };
  if (order === 'newer-version' && snapshot.hash === serving.hash) return { do: 'relabel' };
  return { do: 'load', newEpoch: order === 'newer-epoch' };
}
