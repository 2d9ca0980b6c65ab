import type { ConfigState, SignedSnapshot, Snapshot } from '@gatehouse/core';
import { signSnapshot, type ConfigBus, type SnapshotKeys } from '@gatehouse/sync';
import { readEpoch, rotateEpoch } from '../store/cluster-epoch';
import type { ConfigStore } from '../store/config-store';
import { inspectHead } from './head-inspection';
import type { PublicationRecord } from './publication-record';

export interface HeadRecoveryContext {
  bus: ConfigBus;
  store: ConfigStore;
  keys: SnapshotKeys;
  record: PublicationRecord;
}

async function rotate(store: ConfigStore, current: string | null, after: string | null): Promise<string> {
  if (current === null) throw new Error('the database has no cluster epoch');
  return rotateEpoch(store.db, current, after);
}

/**
 * The bus refused `snapshot` because of the head it holds: find out why and act, so publication goes on (decision 19).
 * 'published' = done (the head was overwritten, or a newer snapshot of ours is already there); 'again' = build and
 * publish once more (a new epoch was started, or the database moved on meanwhile).
 */
export async function overcomeHead(ctx: HeadRecoveryContext, snapshot: Snapshot, signed: SignedSnapshot): Promise<'published' | 'again'> {
  const { bus, store, record } = ctx;
  const verdict = await inspectHead(bus, ctx.keys);
  const ours = snapshot.epoch ?? null;
  if (verdict.kind === 'missing') return 'again';
  if (verdict.kind === 'unverifiable') {
    record.event('forged_head', `the bus held a head that does not verify (${verdict.reason}); replaced with a signed snapshot`, verdict.head);
    await bus.publish(signed, { replace: true });
    return 'published';
  }
  const head = verdict.head;
  const currentEpoch = await readEpoch(store.db);
  if (currentEpoch !== ours) return 'again'; // another replica started a new epoch meanwhile
  if (head.epoch === ours) {
    const version = await store.version();
    if (head.version > version || (head.version === version && head.hash !== snapshot.hash)) {
      const next = await rotate(store, ours, head.epoch);
      record.event(
        'database_restored',
        `the bus held version ${head.version} of this cluster's epoch while the database is at version ${version} ` +
          `(the database was restored or reset); new epoch ${next} published`,
        { version: head.version, epoch: head.epoch },
      );
      return 'again';
    }
    // a replica published a newer version of the same epoch: nothing to do; the reconcile loop follows up
    return version > snapshot.version ? 'again' : 'published';
  }
  // a genuine head of a later epoch than the database's
  const next = await rotate(store, ours, head.epoch);
  record.event(
    'foreign_epoch',
    `the bus held a signed snapshot of a later epoch ${head.epoch} (another cluster on the same Redis prefix with the same secret, ` +
      `or a reset database on a host whose clock is behind); new epoch ${next} published`,
    { version: head.version, epoch: head.epoch },
  );
  return 'again';
}

/**
 * Publishes `signed` over the head the bus holds; false when the bus refuses it (void: a bus that does not say). A head that is not the one this
 * publisher put there last is looked at first: a forged one is replaced (and reported) even where the bus would have
 * let it be overwritten silently. Rejects when the bus is unreachable.
 */
export async function publishOverHead(ctx: Pick<HeadRecoveryContext, 'bus' | 'keys' | 'record'>, snapshot: Snapshot, signed: SignedSnapshot): Promise<boolean | void> {
  const { bus, record } = ctx;
  const head = await bus.latestAnnouncement();
  const verdict = head && !record.isLastPublished(head) ? await inspectHead(bus, ctx.keys) : null;
  if (verdict?.kind === 'unverifiable') {
    record.event('forged_head', `the bus held a head that does not verify (${verdict.reason}); replaced with a signed snapshot`, verdict.head);
    return bus.publish(signed, { replace: true });
  }
  if (verdict?.kind === 'genuine') record.noteReplacedHead(verdict.head, snapshot);
  // the bus stores a snapshot of the same version over the head; data planes would ignore it if the head has the same
  // version with other content (a restored database that was written to since): handled as refused
  const sameVersionOtherContent = head !== null && head.version === snapshot.version && (head.epoch ?? null) === (snapshot.epoch ?? null) && head.hash !== snapshot.hash;
  return sameVersionOtherContent ? false : bus.publish(signed);
}

/**
 * Replaces a stored snapshot that is not the one published (`why`): with `ours` (the snapshot this publisher stored
 * last), or, when the head has moved on by deltas since, with a full snapshot of `state`, returned once stored.
 */
export async function replaceStoredSnapshot(
  ctx: Pick<HeadRecoveryContext, 'bus' | 'keys' | 'record'>,
  why: string,
  ours: SignedSnapshot,
  state: ConfigState | null,
): Promise<SignedSnapshot | null> {
  const { bus, record } = ctx;
  if (state && state.version !== ours.version) {
    record.event('forged_head', `${why}; replaced with a signed snapshot of version ${state.version}`, { version: state.version, epoch: state.epoch });
    const signed = signSnapshot(state.toSnapshot(), ctx.keys);
    return bus.publish(signed, { replace: true }).then(
      () => signed,
      () => null,
    );
  }
  record.event('forged_head', `${why}; replaced with the signed snapshot of version ${ours.version}`, { version: ours.version, epoch: ours.epoch ?? null });
  await bus.publish(ours, { replace: true }).catch(() => {});
  return null;
}
