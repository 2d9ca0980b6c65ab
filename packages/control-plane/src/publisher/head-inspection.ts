import type { Snapshot } from '@gatehouse/core';
import { SnapshotVerificationError, verifySnapshot, type ConfigBus } from '@gatehouse/sync';

/** What the control plane makes of the head the bus holds. */
export type HeadVerdict =
  | { kind: 'missing' }
  /** unsigned, signed with another secret, undecodable, or a head that does not describe the stored snapshot */
  | { kind: 'unverifiable'; reason: string; head?: { version: number; epoch: string | null } }
  /** a snapshot signed with our secret, whose head matches it */
  | { kind: 'genuine'; head: { version: number; hash: string; epoch: string | null } };

/** Fetches the head and the stored snapshot and verifies them. Rejects only when the bus itself fails. */
export async function inspectHead(bus: ConfigBus, secret: string): Promise<HeadVerdict> {
  const announced = await bus.latestAnnouncement();
  const head = announced ? { version: announced.version, epoch: announced.epoch ?? null } : undefined;
  const unverifiable = (reason: string): HeadVerdict => (head ? { kind: 'unverifiable', reason, head } : { kind: 'unverifiable', reason });
  let snapshot: Snapshot;
  try {
    const stored = await bus.fetchLatest();
    if (!stored) return announced ? unverifiable('a head without a stored snapshot') : { kind: 'missing' };
    snapshot = verifySnapshot(stored, secret);
  } catch (err) {
    if (err instanceof SnapshotVerificationError) return unverifiable(err.message);
    throw err;
  }
  const epoch = snapshot.epoch ?? null;
  if (!announced || announced.version !== snapshot.version || announced.hash !== snapshot.hash || (announced.epoch ?? null) !== epoch) {
    return unverifiable('the head does not describe the stored snapshot');
  }
  return { kind: 'genuine', head: { version: snapshot.version, hash: snapshot.hash, epoch } };
}
