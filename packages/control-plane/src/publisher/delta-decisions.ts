import type { ConfigState, SectionChanges, SnapshotAnnouncement, SnapshotDelta } from '@gatehouse/core';

/** changed rows below which a write is always published as a delta */
const DELTA_FLOOR_ROWS = 100;

/**
 * Whether changes rewrite more rows than half the configuration holds (a declarative replacement of rows that carry
 * much text, too few to pass `deltaLimit`): the full snapshot is then hashed and encoded in slices, where a delta's
 * rows are hashed at once, three times over (its hash, the compiled copy, the kept state).
 */
export function replacesMost(state: ConfigState, changes: Record<string, SectionChanges>): boolean {
  let changed = 0;
  for (const change of Object.values(changes)) changed += (change.upsert?.length ?? 0) + (change.delete?.length ?? 0);
  if (changed <= DELTA_FLOOR_ROWS) return false;
  let rows = 0;
  for (const section of state.sections.values()) rows += section.size;
  return changed > rows / 2;
}

/** The delta from the published state to `version`, made of `changes`, in the state's epoch. */
export function deltaOf(state: ConfigState, version: number, changes: Record<string, SectionChanges>): SnapshotDelta {
  const { hash, hashes } = state.hashAfter(changes);
  const delta: SnapshotDelta = { format: 'delta', from: state.version, version, created_at: Math.floor(Date.now() / 1000), hash, hashes, changes };
  if (state.epoch !== null) delta.epoch = state.epoch;
  return delta;
}

/** Whether the bus's head is the state as published (nothing new to publish then). */
export function headIsState(head: SnapshotAnnouncement | null, state: ConfigState): boolean {
  return head !== null && head.version === state.version && head.hash === state.hash() && (head.epoch ?? null) === state.epoch;
}

/**
 * The bus refused `delta` because of `head`: 'full' when a full snapshot must be published instead (another epoch, an
 * older head, other content at this version); 'later' when another replica published a later version first; 'same'
 * when another replica published this very version.
 */
export function afterRefusedDelta(head: SnapshotAnnouncement | null, state: ConfigState, delta: SnapshotDelta): 'full' | 'later' | 'same' {
  if (!head || (head.epoch ?? null) !== state.epoch || head.version < delta.version) return 'full';
  if (head.version === delta.version && head.hash !== delta.hash) return 'full';
  return head.version > delta.version ? 'later' : 'same';
}
