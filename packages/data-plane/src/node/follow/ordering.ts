// The data plane's ordering rules as one pure state machine: `next(state, event)` says what to do with what the bus
// or the disk cache hands over, given what the node serves and its mode. DataPlaneSync carries the actions out
// (verify, compile, swap, cache, fetch) and reports their outcomes back as events; the rules touch nothing and are
// tested with one table.
import type { SnapshotAnnouncement } from '@gatehouse/core';
import { isSealed, succession, type ConfigPosition } from '@gatehouse/sync';

/** What a data plane serves: its position (null while nothing is loaded) and the content hash. */
export interface Serving {
  position: ConfigPosition | null;
  hash: string | null;
}

/** A delta's place: `from` is the version it applies to. */
export interface DeltaPosition extends ConfigPosition {
  from: number;
}

/** What is served, and the node's mode. */
export interface SyncState {
  serving: Serving;
  /** the node applies deltas; without, every version is a full load */
  followsDeltas: boolean;
  /** a delta did not apply: the next full load reloads the serving epoch's snapshot even when it is not newer */
  rebuilding: boolean;
  /** the disk cache holds the serving config unsealed (written before the control plane sealed it) */
  cacheUnsealed: boolean;
}

/** Where a chain of deltas was refused (a gap, or one that did not apply): an announced one, the kept ones, or those after a full load. */
export type ChainStage = 'announced' | 'kept' | 'after-load';

/** What the node is told, or learns from carrying out an action. */
export type SyncEvent =
  /** an announcement on the bus, with or without its delta */
  | { on: 'announcement'; announcement: SnapshotAnnouncement }
  /** a delta offered to the node (announced, kept on the bus, or read from the disk cache) */
  | { on: 'delta'; delta: DeltaPosition }
  /** the stored version, read by the periodic check (the safety net for a lost announcement) */
  | { on: 'stored-version'; head: SnapshotAnnouncement }
  /** the bus's stored snapshot, fetched */
  | { on: 'stored-head'; head: ConfigPosition & { cipher?: string } }
  /** the deltas the bus keeps after the serving version, with the stored snapshot they were fetched beside */
  | { on: 'kept-deltas'; kept: readonly DeltaPosition[]; head: ConfigPosition }
  /** a full snapshot offered to the node (from the disk cache or the bus) */
  | { on: 'snapshot'; snapshot: ConfigPosition & { hash: string } }
  /** the stored snapshot was loaded in full, or found already served (anything but refused) */
  | { on: 'snapshot-loaded'; version: number }
  /** deltas left a gap or one did not apply */
  | { on: 'chain-refused'; stage: ChainStage };

/** What the node does; an event yields at most one. */
export type SyncAction =
  /** apply the event's delta (or the announcement's) and swap */
  | { do: 'apply-delta' }
  /** fetch the stored snapshot (and what follows it) */
  | { do: 'fetch' }
  | { do: 'ignore'; why: 'not newer' | 'same hash' | 'stale delta' | 'up to date' }
  /** rewrite the disk cache with the stored snapshot, which holds the serving version sealed */
  | { do: 'reseal' }
  /** load the stored snapshot in full (a rebuild reloads the serving epoch's even when it is not newer) */
  | { do: 'load-full'; rebuild: boolean }
  /** fetch the deltas kept after `after` */
  | { do: 'fetch-deltas'; after: number }
  /** apply the kept deltas in order */
  | { do: 'apply-chain' }
  /** after a full load: fetch the deltas kept after `after` and apply them in order */
  | { do: 'catch-up'; after: number }
  /** try the fetch again later; `error` is recorded when given */
  | { do: 'retry'; error?: string }
  | { do: 'keep-serving'; why: 'older' | 'same' }
  /** move the serving content to the snapshot's version (equal hash), compiling nothing */
  | { do: 'relabel' }
  /** verify, compile and swap the snapshot */
  | { do: 'load'; newEpoch: boolean };

/** The ordering rules: what the node does on `event`, given `state`. */
export function next(state: SyncState, event: SyncEvent): SyncAction[] {
  const at = state.serving.position;
  switch (event.on) {
    case 'announcement':
      return [onAnnouncement(state, event.announcement)];
    case 'delta':
      return [onDelta(event.delta, at)];
    case 'stored-version':
      return [isNewer(event.head, state.serving) ? { do: 'fetch' } : { do: 'ignore', why: notNewer(event.head, state.serving) }];
    case 'stored-head':
      return [onStoredHead(state, event.head)];
    case 'kept-deltas':
      return [onKeptDeltas(state, event.kept, event.head)];
    case 'snapshot':
      return [onSnapshot(event.snapshot, state.serving, state.rebuilding)];
    case 'snapshot-loaded':
      return state.followsDeltas ? [{ do: 'catch-up', after: at?.version ?? event.version }] : [];
    case 'chain-refused':
      // an announced delta falls back on a fetch; kept ones on the stored snapshot; those after it on a later try
      return [event.stage === 'announced' ? { do: 'fetch' } : event.stage === 'kept' ? { do: 'load-full', rebuild: state.rebuilding } : { do: 'retry' }];
  }
}

/**
 * An announcement: its delta is taken when the node follows deltas and is not waiting for a full load; otherwise the
 * stored snapshot is fetched when the announced config follows the serving one with other content, or when the
 * serving version is held in clear on disk (the bus may now have it sealed).
 */
function onAnnouncement(state: SyncState, announcement: SnapshotAnnouncement): SyncAction {
  if (announcement.delta && state.followsDeltas && !state.rebuilding) return onDelta(announcement.delta, state.serving.position);
  if (state.cacheUnsealed && succession(announcement, state.serving.position) === 'same') return { do: 'fetch' };
  return isNewer(announcement, state.serving) ? { do: 'fetch' } : { do: 'ignore', why: notNewer(announcement, state.serving) };
}

/** a later epoch, or a later version with other content */
function isNewer(head: ConfigPosition & { hash: string }, serving: Serving): boolean {
  const order = succession(head, serving.position);
  return order === 'newer-epoch' || (order === 'newer-version' && head.hash !== serving.hash);
}

function notNewer(head: ConfigPosition & { hash: string }, serving: Serving): 'not newer' | 'same hash' {
  return succession(head, serving.position) === 'newer-version' ? 'same hash' : 'not newer';
}

/**
 * A delta: applied when it applies to the serving version (its `from` at or before it, its version after, in the same
 * epoch), ignored when the serving config already holds it; a gap (something missing between the two, nothing served,
 * another epoch) fetches the stored snapshot and the kept deltas instead.
 */
function onDelta(delta: DeltaPosition, serving: ConfigPosition | null): SyncAction {
  if (serving === null || (delta.epoch ?? null) !== (serving.epoch ?? null) || delta.from > serving.version) return { do: 'fetch' };
  return delta.version <= serving.version ? { do: 'ignore', why: 'stale delta' } : { do: 'apply-delta' };
}

/**
 * The bus's stored snapshot (its head): the disk cache is resealed when it holds the serving version in clear and the
 * head is that version sealed; a node without deltas loads it (the load refuses an older one); a node with deltas
 * loads it in full (nothing served, a new epoch, or a delta that did not apply), keeps the serving config (an older
 * epoch), or follows the deltas kept after the serving version.
 */
function onStoredHead(state: SyncState, head: ConfigPosition & { cipher?: string }): SyncAction {
  const serving = state.serving.position;
  const order = succession(head, serving);
  if (state.cacheUnsealed && isSealed(head) && order === 'same') return { do: 'reseal' };
  if (!state.followsDeltas || state.rebuilding || serving === null || order === 'newer-epoch') return { do: 'load-full', rebuild: state.rebuilding };
  return order === 'older-epoch' ? { do: 'keep-serving', why: 'older' } : { do: 'fetch-deltas', after: serving.version };
}

/**
 * The deltas kept after the serving version: applied in order when they continue it; otherwise the stored snapshot is
 * loaded when it is newer, the node is up to date when nothing is kept, and kept deltas that start after the serving
 * version (the bus trimmed them while the snapshot lagged) are fetched again later.
 */
function onKeptDeltas(state: SyncState, kept: readonly DeltaPosition[], head: ConfigPosition): SyncAction {
  const serving = state.serving.position;
  const first = kept[0];
  if (serving === null) return { do: 'load-full', rebuild: state.rebuilding };
  if (first !== undefined && first.from <= serving.version && (first.epoch ?? null) === (serving.epoch ?? null)) return { do: 'apply-chain' };
  if (succession(head, serving) === 'newer-version') return { do: 'load-full', rebuild: state.rebuilding };
  if (first === undefined) return { do: 'ignore', why: 'up to date' };
  const error = first.from > serving.version ? `kept deltas start at ${first.from}, after the serving version ${serving.version}` : `kept deltas are of epoch ${first.epoch}, not the serving one`;
  return { do: 'retry', error };
}

/**
 * A full snapshot offered to the node: an older one is refused, the serving one is nothing to do, a newer version with
 * the serving content only moves the label, anything else is loaded. A rebuild (after a delta that did not apply)
 * reloads the serving epoch's snapshot even when its version is not newer.
 */
function onSnapshot(snapshot: ConfigPosition & { hash: string }, serving: Serving, rebuilding: boolean): SyncAction {
  const servingEpoch = serving.position?.epoch ?? null;
  const order = rebuilding && (snapshot.epoch ?? null) === servingEpoch ? 'newer-epoch' : succession(snapshot, serving.position);
  if (order === 'older-version' || order === 'older-epoch') return { do: 'keep-serving', why: 'older' };
  if (order === 'same') return { do: 'keep-serving', why: 'same' };
  if (order === 'newer-version' && snapshot.hash === serving.hash) return { do: 'relabel' };
  return { do: 'load', newEpoch: order === 'newer-epoch' };
}
