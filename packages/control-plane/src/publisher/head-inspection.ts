import type { SignedSnapshot, Snapshot } from '@gatehouse/core';
import { SnapshotVerificationError, verifyDelta, verifySnapshot, type ConfigBus, type SnapshotKeys, type VerifyOptions } from '@gatehouse/sync';

/**
 * A head signed with our secret but not sealed was published by a control plane of the release before sealing: it is
 * genuine (its version and epoch count), and the next publication replaces it with a sealed one.
 */
export const GENUINE_UNSEALED: VerifyOptions = { acceptUnsealed: true };

/** What the control plane makes of the head the bus holds. */
export type HeadVerdict =
  | { kind: 'missing' }
  /** unsigned, signed with another secret, undecodable, or a head that does not describe the stored snapshot */
  | { kind: 'unverifiable'; reason: string; head?: { version: number; epoch: string | null } }
  /** a snapshot signed with our secret, whose head matches it */
  | { kind: 'genuine'; head: { version: number; hash: string; epoch: string | null } };

/** Fetches the head and the stored snapshot and verifies them. Rejects only when the bus itself fails. */
export async function inspectHead(bus: ConfigBus, keys: SnapshotKeys): Promise<HeadVerdict> {
  const announced = await bus.latestAnnouncement();
  const head = announced ? { version: announced.version, epoch: announced.epoch ?? null } : undefined;
  const unverifiable = (reason: string): HeadVerdict => (head ? { kind: 'unverifiable', reason, head } : { kind: 'unverifiable', reason });
  let snapshot: Snapshot;
  try {
    const stored = await bus.fetchLatest();
    if (!stored) return announced ? unverifiable('a head without a stored snapshot') : { kind: 'missing' };
    snapshot = verifySnapshot(stored, keys, GENUINE_UNSEALED);
  } catch (err) {
    if (err instanceof SnapshotVerificationError) return unverifiable(err.message);
    throw err;
  }
  const epoch = snapshot.epoch ?? null;
  if (!announced) return unverifiable('the head does not describe the stored snapshot');
  if (announced.version === snapshot.version && announced.hash === snapshot.hash && (announced.epoch ?? null) === epoch) {
    return { kind: 'genuine', head: { version: snapshot.version, hash: snapshot.hash, epoch } };
  }
  // a head ahead of the stored snapshot must be the last kept delta of the same epoch
  if ((announced.epoch ?? null) === epoch && announced.version > snapshot.version) {
    const last = (await bus.fetchDeltas(announced.version - 1)).find((d) => d.version === announced.version);
    if (last) {
      try {
        const delta = verifyDelta(last, keys, GENUINE_UNSEALED);
        if (delta.hash === announced.hash && (delta.epoch ?? null) === epoch) return { kind: 'genuine', head: { version: delta.version, hash: delta.hash, epoch } };
      } catch (err) {
        if (!(err instanceof SnapshotVerificationError)) throw err;
        return unverifiable(err.message);
      }
    }
  }
  return unverifiable('the head does not describe the stored snapshot or a kept delta');
}

/** every this many reconcile rounds with the head in order, the stored snapshot itself is compared too */
const STORED_CHECK_EVERY = 5;

/** How often the stored snapshot is compared: a large one (a megabyte and more) once a minute, a small one every fifth round. */
export function storedSnapshotCheckEvery(stored: SignedSnapshot | null): number {
  return (stored?.payload.length ?? 0) > 1_000_000 ? STORED_CHECK_EVERY * 12 : STORED_CHECK_EVERY;
}

/**
 * Whether the stored snapshot is the one this publisher stored last (`ours`), or a genuine later one of the same
 * epoch (another replica's): null when it is, else why not. A bus that cannot be reached gives null (next round).
 */
export async function storedSnapshotProblem(bus: ConfigBus, ours: SignedSnapshot, keys: SnapshotKeys): Promise<string | null> {
  let stored: SignedSnapshot | null;
  try {
    stored = await bus.fetchLatest();
  } catch (err) {
    return err instanceof SnapshotVerificationError ? err.message : null;
  }
  if (!stored) return 'the snapshot is missing';
  if (stored.payload === ours.payload && stored.signature === ours.signature && stored.version === ours.version) return null;
  // another replica may have stored a later one of the same epoch: that is fine when it is genuine
  try {
    const snapshot = verifySnapshot(stored, keys, GENUINE_UNSEALED);
    if ((snapshot.epoch ?? null) === (ours.epoch ?? null) && snapshot.version >= ours.version) return null;
  } catch {}
  return 'the stored snapshot is not the one its head announces';
}
