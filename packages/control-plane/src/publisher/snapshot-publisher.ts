import { ConfigState, type SignedSnapshot, type Snapshot } from '@gatehouse/core';
import { deriveSnapshotKeys, signDeltaInSlices, signSnapshotInSlices, type SnapshotKeys } from '@gatehouse/sync';
import { CHANGES_KEPT_VERSIONS, pruneChanges } from './change-capture';
import { installChangeCapture, readChangesSince } from './read-changes';
import { isDatabaseUnreachable } from '../db/unreachable';
import { readEpoch } from '../store/cluster-epoch';
import { storedSnapshotCheckEvery, storedSnapshotProblem } from './head-inspection';
import { overcomeHead, publishOverHead, replaceStoredSnapshot } from './head-recovery';
import { PublicationRecord, type PublisherStatus } from './publication-record';
import type { SnapshotPublisherOptions } from './publisher-options';
import { afterRefusedDelta, deltaOf, headIsState, replacesMost } from './delta-decisions';
import { readSnapshotConfig } from './read-config';
import { buildSnapshotInSlices } from './build-in-slices';
import { SnapshotStoreSchedule } from './snapshot-store-schedule';
import { PublicationRetry } from './publication-retry';

export type { PublicationEvent, PublisherLogger, PublisherStatus } from './publication-record';
export type { SnapshotPublisherOptions } from './publisher-options';

/** rounds of "the head blocks us → act on it → publish again" within one publication */
const MAX_HEAD_ROUNDS = 4;

/**
 * Builds, checks, signs and publishes snapshots. Triggers coalesce: while one publication runs, any number of new
 * triggers cause exactly one more, which reads the latest committed state. Failures (bus or database down) are
 * retried with backoff, and a periodic reconcile republishes when the bus's head is not what the database says.
 *
 * Publication never freezes (decision 19): when the bus refuses a snapshot because of the head it holds, the head is
 * inspected. A head that does not verify (unsigned, another secret, inconsistent) is overwritten. A genuine head
 * ahead of the database in our own epoch means the database went back (restored from a dump): a new epoch starts.
 * A genuine head of a later epoch (another cluster sharing the secret and prefix, or a reset database on a host whose
 * clock is behind) is overtaken by a new epoch. Each is logged and listed in `status().events`.
 */
export class SnapshotPublisher {
  private inFlight: Promise<void> | null = null;
  private pending = false;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** the state whose snapshot the compile check refused: the reconcile loop does not retry it until it changes */
  private refused: { version: number; epoch: string | null } | null = null;
  /** the last snapshot this publisher stored, as stored */
  private lastSigned: SignedSnapshot | null = null;
  private reconcileRounds = 0;
  /** the configuration as last published (or built), kept current by deltas; null until the first full publication */
  private state: ConfigState | null = null;
  /** the next publication is a full snapshot (start, bulk writes, a refused or lost delta, a head to look at) */
  private fullNeeded = true;
  /** change capture is installed: deltas can be read from the database */
  private captureReady = false;
  private readonly storeSchedule: SnapshotStoreSchedule;
  private readonly record: PublicationRecord;
  private readonly retry: PublicationRetry;

  /** signing and sealing keys, derived once from the cluster secret */
  private readonly keys: SnapshotKeys;

  constructor(private readonly opts: SnapshotPublisherOptions) {
    this.keys = deriveSnapshotKeys(opts.secret);
    this.record = new PublicationRecord(opts.log);
    this.retry = new PublicationRetry(this.record, () => void this.trigger(), opts.onFailed);
    this.storeSchedule = new SnapshotStoreSchedule({
      bus: opts.bus,
      keys: this.keys,
      log: opts.log,
      idleMs: opts.snapshotStoreIdleMs,
      everyDeltas: opts.snapshotStoreEveryDeltas,
      state: () => this.state,
      onStored: (signed) => (this.lastSigned = signed),
    });
  }

  status(): PublisherStatus {
    return this.record.status();
  }

  /** publishes the current state at once and keeps it published */
  async start(): Promise<void> {
    if (this.opts.loader) this.captureReady = await installChangeCapture(this.opts.store, this.opts, this.opts.log);
    await this.trigger();
    const every = this.opts.reconcileIntervalMs ?? 1000;
    this.reconcileTimer = setInterval(() => void this.reconcile(), every);
    this.reconcileTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    this.retry.stop();
    const stored = this.storeSchedule.stop();
    await this.inFlight?.catch(() => {});
    await stored;
  }

  /** asks for a publication of the latest committed config; resolves when one that started after the call is done */
  trigger(): Promise<void> {
    if (this.inFlight) {
      this.pending = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      do {
        this.pending = false;
        await this.publishOnce();
      } while (this.pending && !this.stopped);
    })().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async publishOnce(): Promise<void> {
    const started = performance.now();
    if (this.state && this.captureReady && !this.fullNeeded && this.opts.loader) {
      if ((await this.publishDelta(started)) === 'done') return;
      this.fullNeeded = true;
    }
    for (let round = 0; round < MAX_HEAD_ROUNDS && !this.stopped; round++) {
      const snapshot = await this.build();
      if (!snapshot) return;
      // made and compressed in slices: a large snapshot does not hold up the admin API meanwhile (built for this
      // publication, nothing changes it)
      const signed = await signSnapshotInSlices(snapshot, this.keys);
      let stored: boolean | void;
      try {
        stored = await publishOverHead({ bus: this.opts.bus, keys: this.keys, record: this.record }, snapshot, signed);
      } catch (err) {
        this.retry.failed(`snapshot ${snapshot.version} not published: the bus is unreachable; retrying`, err, true);
        return;
      }
      if (stored === false) {
        let next: 'published' | 'again';
        try {
          next = await overcomeHead({ bus: this.opts.bus, store: this.opts.store, keys: this.keys, record: this.record }, snapshot, signed);
        } catch (err) {
          const what = isDatabaseUnreachable(err) ? 'the database is unreachable' : 'the bus head cannot be checked';
          if (isDatabaseUnreachable(err)) this.record.databaseReachable(false, err);
          this.retry.failed(`snapshot ${snapshot.version} not published: ${what}; retrying`, err, true);
          return;
        }
        if (next === 'again') continue;
      }
      this.lastSigned = signed;
      if (this.opts.loader) {
        this.state = ConfigState.fromSnapshot(snapshot, { copyRows: true });
        this.fullNeeded = false;
        this.storeSchedule.fullPublished();
      }
      this.published(snapshot, started);
      return;
    }
    if (!this.stopped) this.retry.failed('snapshot not published: the bus head kept changing under the publisher; retrying', new Error('too many rounds'), true);
  }

  private published(what: Pick<Snapshot, 'version' | 'hash' | 'epoch'>, started: number): void {
    this.record.published(what);
    this.retry.published();
    this.opts.onPublished?.(what, performance.now() - started);
  }

  /**
   * Publishes what changed since the last publication as a signed delta, checked by applying it to the compiled copy.
   * 'full' when a full snapshot must be published instead (many changes, another epoch, a head this publisher did not
   * expect); 'done' otherwise (published, nothing to do, or failed and reported).
   */
  private async publishDelta(started: number): Promise<'done' | 'full'> {
    const state = this.state!;
    let read: Awaited<ReturnType<typeof readChangesSince>>;
    try {
      read = await readChangesSince(this.opts.store, state, {
        plugins: this.opts.plugins,
        keyring: this.opts.keyring,
        tls: this.opts.tls,
        limit: this.opts.deltaLimit ?? 5000,
      });
    } catch (err) {
      this.retry.readFailed(err);
      return 'done';
    }
    this.record.databaseReachable(true);
    if (read.kind === 'full' || replacesMost(state, read.changes)) return 'full';
    let head;
    // a database behind what was published went back in time (restored): the full path starts a new epoch
    if (read.version < state.version) return 'full';
    if (read.version === state.version) {
      // nothing new: fine when the bus holds what was published, else the full path looks at the head
      try {
        head = await this.opts.bus.latestAnnouncement();
      } catch (err) {
        this.retry.failed(`snapshot ${state.version} not checked: the bus is unreachable; retrying`, err, true);
        return 'done';
      }
      return headIsState(head, state) ? 'done' : 'full';
    }
    const delta = deltaOf(state, read.version, read.changes);
    try {
      this.opts.loader!.applyDelta(delta);
      this.refused = null;
    } catch (err) {
      this.refused = { version: read.version, epoch: state.epoch };
      this.fullNeeded = true;
      this.retry.failed('snapshot not published: it does not build or load', err, false);
      return 'done';
    }
    state.applyDelta(delta);
    // the delta's rows are its own (read for it; applying it to the state copied them)
    const signed = await signDeltaInSlices(delta, this.keys);
    let stored: boolean;
    try {
      stored = await this.opts.bus.publishDelta(signed);
      if (!stored) head = await this.opts.bus.latestAnnouncement();
    } catch (err) {
      this.fullNeeded = true;
      this.retry.failed(`delta ${delta.from}→${delta.version} not published: the bus is unreachable; retrying`, err, true);
      return 'done';
    }
    if (!stored) {
      const after = afterRefusedDelta(head ?? null, state, delta);
      if (after === 'full') return 'full';
      // another replica published this version, or a later one, first
      if (after === 'later') this.pending = true;
      else this.published(delta, started);
      return 'done';
    }
    this.published(delta, started);
    this.storeSchedule.deltaPublished();
    return 'done';
  }

  /** Reads, builds and checks the snapshot of the latest committed state; null (after reporting why) when it cannot. */
  private async build(): Promise<Snapshot | null> {
    let read: Awaited<ReturnType<typeof readSnapshotConfig>>;
    try {
      read = await readSnapshotConfig(this.opts.store, { plugins: this.opts.plugins, keyring: this.opts.keyring, tls: this.opts.tls });
    } catch (err) {
      this.retry.readFailed(err);
      return null;
    }
    this.record.databaseReachable(true);
    try {
      const snapshot = await buildSnapshotInSlices(read.version, read.config);
      if (read.epoch) snapshot.epoch = read.epoch;
      if (this.opts.loader) this.opts.loader.load(snapshot);
      else this.opts.check(snapshot);
      this.refused = null;
      return snapshot;
    } catch (err) {
      this.refused = { version: read.version, epoch: read.epoch };
      this.retry.failed('snapshot not published: it does not build or load', err, false);
      return null;
    }
  }

  /** Publishes again unless the bus's head is exactly what was last published and that is the database's state. */
  private async reconcile(): Promise<void> {
    if (this.stopped || this.inFlight || this.retry.waiting) return;
    let head;
    try {
      head = await this.opts.bus.latestAnnouncement();
    } catch {
      return; // bus unreachable: the publication that is due retries on its own
    }
    let version: number;
    let epoch: string | null;
    try {
      [version, epoch] = await Promise.all([this.opts.store.version(), readEpoch(this.opts.store.db)]);
      this.record.databaseReachable(true);
    } catch (err) {
      if (isDatabaseUnreachable(err)) this.record.databaseReachable(false, err);
      return;
    }
    const inSync = this.record.inSync(head, version, epoch);
    const refused = this.refused !== null && this.refused.version === version && this.refused.epoch === epoch;
    if (!inSync && !refused) await this.trigger();
    else if (inSync && ++this.reconcileRounds % storedSnapshotCheckEvery(this.lastSigned) === 0) {
      await this.checkStoredSnapshot();
      if (this.captureReady && version > CHANGES_KEPT_VERSIONS) await pruneChanges(this.opts.store.db, version - CHANGES_KEPT_VERSIONS).catch(() => {});
    }
  }

  /**
   * The head is ours, but is the stored snapshot? One written over it alone (data planes refuse it, and a data plane
   * starting without a cache would have nothing to load) is replaced by the one published.
   */
  private async checkStoredSnapshot(): Promise<void> {
    const ours = this.lastSigned;
    if (!ours) return;
    const why = await storedSnapshotProblem(this.opts.bus, ours, this.keys);
    if (!why || this.stopped || this.inFlight) return;
    // the head may have moved on by deltas: a full snapshot of the current version then replaces the stored one
    const replaced = await replaceStoredSnapshot({ bus: this.opts.bus, keys: this.keys, record: this.record }, why, ours, this.opts.loader ? this.state : null);
    if (replaced) this.lastSigned = replaced;
  }
}
