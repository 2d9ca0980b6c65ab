import { ConfigState, type SectionChanges, type SignedSnapshot, type Snapshot, type SnapshotDelta } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { ConfigBus } from '@gatehouse/sync';
import { deriveSnapshotKeys, signDeltaInSlices, signSnapshot, signSnapshotAsync, signSnapshotInSlices, SnapshotVerificationError, verifySnapshot, type SnapshotKeys } from '@gatehouse/sync';
import { CHANGES_KEPT_VERSIONS, ensureChangeCapture, pruneChanges } from './change-capture';
import { KEY_TABLES, readChangesSince, rowTables, TLS_TABLES } from './read-changes';
import { isDatabaseUnreachable } from '../db/unreachable';
import type { Keyring } from '../keys/keyring';
import { readEpoch } from '../store/cluster-epoch';
import type { ConfigStore } from '../store/config-store';
import { GENUINE_UNSEALED, inspectHead } from './head-inspection';
import { overcomeHead } from './head-recovery';
import { PublicationRecord, type PublisherLogger, type PublisherStatus } from './publication-record';
import { readSnapshotConfig } from './read-config';
import { buildSnapshotInSlices } from './build-in-slices';

export type { PublicationEvent, PublisherLogger, PublisherStatus } from './publication-record';

export interface SnapshotPublisherOptions {
  store: ConfigStore;
  bus: ConfigBus;
  secret: string;
  plugins: PluginDefinition[];
  keyring?: Keyring | null;
  /** certificates, SNIs, CA certificates and vaults are part of the snapshot (needs `tlsMigrations()` and a keyring) */
  tls?: boolean;
  /** the data plane's compile: a snapshot that would not load there is never published (throws to refuse) */
  check: (snapshot: Snapshot) => void;
  /**
   * the data plane's compiled config, kept by the control plane: `load` a full snapshot, `applyDelta` a delta, each
   * throwing to refuse. With it, writes are published as deltas (the database's change capture says what changed),
   * checked by applying them to this copy; `check` is then not used.
   */
  loader?: { load(snapshot: Snapshot): void; applyDelta(delta: SnapshotDelta): void };
  /** above this many changed rows in one publication, a full snapshot is published instead of a delta (default 5000) */
  deltaLimit?: number;
  /** ms without a publication after which the full snapshot is stored for joining data planes (default 1000) */
  snapshotStoreIdleMs?: number;
  /** after this many deltas the full snapshot is stored even while writes go on (default 10000) */
  snapshotStoreEveryDeltas?: number;
  log: PublisherLogger;
  /**
   * how often the publisher compares what the bus holds with the database, in ms (default 1000): catches a restarted,
   * empty Redis, a forged or foreign head, and a database that was restored under a running control plane
   */
  reconcileIntervalMs?: number;
  /** told after each successful publication (full or delta), with how long it took (metrics) */
  onPublished?: (published: Pick<Snapshot, 'version' | 'hash' | 'epoch'>, durationMs: number) => void;
  /** told after each failed publication (metrics) */
  onFailed?: (message: string) => void;
}

/** rounds of "the head blocks us → act on it → publish again" within one publication */
const MAX_HEAD_ROUNDS = 4;
/** every this many reconcile rounds with the head in order, the stored snapshot itself is compared too */
const FULL_CHECK_EVERY = 5;

/** changed rows below which a write is always published as a delta */
const DELTA_FLOOR_ROWS = 100;

/**
 * Whether changes rewrite more rows than half the configuration holds (a declarative replacement of rows that carry
 * much text, too few to pass `deltaLimit`): the full snapshot is then hashed and encoded in slices, where a delta's
 * rows are hashed at once, three times over (its hash, the compiled copy, the kept state).
 */
function replacesMost(state: ConfigState, changes: Record<string, SectionChanges>): boolean {
  let changed = 0;
  for (const change of Object.values(changes)) changed += (change.upsert?.length ?? 0) + (change.delete?.length ?? 0);
  if (changed <= DELTA_FLOOR_ROWS) return false;
  let rows = 0;
  for (const section of state.sections.values()) rows += section.size;
  return changed > rows / 2;
}

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
  private retryTimer: NodeJS.Timeout | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = 250;
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
  private storeTimer: NodeJS.Timeout | null = null;
  private storing: Promise<void> | null = null;
  private deltasSinceStore = 0;
  private readonly record: PublicationRecord;

  /** signing and sealing keys, derived once from the cluster secret */
  private readonly keys: SnapshotKeys;

  constructor(private readonly opts: SnapshotPublisherOptions) {
    this.keys = deriveSnapshotKeys(opts.secret);
    this.record = new PublicationRecord(opts.log);
  }

  status(): PublisherStatus {
    return this.record.status();
  }

  /** publishes the current state at once and keeps it published */
  async start(): Promise<void> {
    if (this.opts.loader) {
      const tables = [...rowTables(this.opts.plugins).keys(), ...(this.opts.keyring ? KEY_TABLES : []), ...(this.opts.keyring && this.opts.tls ? TLS_TABLES : [])];
      try {
        await ensureChangeCapture(this.opts.store.db, tables);
        this.captureReady = true;
        this.opts.store.bumpOnCommit();
      } catch (err) {
        this.opts.log.warn('change capture unavailable: every write publishes a full snapshot', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    await this.trigger();
    const every = this.opts.reconcileIntervalMs ?? 1000;
    this.reconcileTimer = setInterval(() => void this.reconcile(), every);
    this.reconcileTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.storeTimer) clearTimeout(this.storeTimer);
    await this.inFlight?.catch(() => {});
    await this.storing?.catch(() => {});
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
        // A head that is not the one this publisher put there last is looked at first: a forged one is replaced (and
        // reported) even where the bus would have let it be overwritten silently.
        const head = await this.opts.bus.latestAnnouncement();
        const verdict = head && !this.record.isLastPublished(head) ? await inspectHead(this.opts.bus, this.keys) : null;
        if (verdict?.kind === 'unverifiable') {
          this.record.event('forged_head', `the bus held a head that does not verify (${verdict.reason}); replaced with a signed snapshot`, verdict.head);
          stored = await this.opts.bus.publish(signed, { replace: true });
        } else {
          if (verdict?.kind === 'genuine') this.record.noteReplacedHead(verdict.head, snapshot);
          // the bus stores a snapshot of the same version over the head; data planes would ignore it if the head has
          // the same version with other content (a restored database that was written to since): handled as refused
          const sameVersionOtherContent =
            head !== null && head.version === snapshot.version && (head.epoch ?? null) === (snapshot.epoch ?? null) && head.hash !== snapshot.hash;
          stored = sameVersionOtherContent ? false : await this.opts.bus.publish(signed);
        }
      } catch (err) {
        this.fail(`snapshot ${snapshot.version} not published: the bus is unreachable; retrying`, err, true);
        return;
      }
      if (stored === false) {
        let next: 'published' | 'again';
        try {
          next = await overcomeHead({ bus: this.opts.bus, store: this.opts.store, keys: this.keys, record: this.record }, snapshot, signed);
        } catch (err) {
          const what = isDatabaseUnreachable(err) ? 'the database is unreachable' : 'the bus head cannot be checked';
          if (isDatabaseUnreachable(err)) this.databaseReachable(false, err);
          this.fail(`snapshot ${snapshot.version} not published: ${what}; retrying`, err, true);
          return;
        }
        if (next === 'again') continue;
      }
      this.lastSigned = signed;
      if (this.opts.loader) {
        this.state = ConfigState.fromSnapshot(snapshot, { copyRows: true });
        this.fullNeeded = false;
        this.deltasSinceStore = 0;
      }
      this.published(snapshot, started);
      return;
    }
    if (!this.stopped) this.fail('snapshot not published: the bus head kept changing under the publisher; retrying', new Error('too many rounds'), true);
  }

  private published(what: Pick<Snapshot, 'version' | 'hash' | 'epoch'>, started: number): void {
    this.record.published(what);
    this.retryDelayMs = 250;
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
      this.readFailed(err);
      return 'done';
    }
    this.databaseReachable(true);
    if (read.kind === 'full' || replacesMost(state, read.changes)) return 'full';
    const epoch = state.epoch ?? undefined;
    let head;
    // a database behind what was published went back in time (restored): the full path starts a new epoch
    if (read.version < state.version) return 'full';
    if (read.version === state.version) {
      // nothing new: fine when the bus holds what was published, else the full path looks at the head
      try {
        head = await this.opts.bus.latestAnnouncement();
      } catch (err) {
        this.fail(`snapshot ${state.version} not checked: the bus is unreachable; retrying`, err, true);
        return 'done';
      }
      return head && head.version === state.version && head.hash === state.hash() && (head.epoch ?? null) === state.epoch ? 'done' : 'full';
    }
    const { hash, hashes } = state.hashAfter(read.changes);
    const delta: SnapshotDelta = { format: 'delta', from: state.version, version: read.version, created_at: Math.floor(Date.now() / 1000), hash, hashes, changes: read.changes };
    if (epoch !== undefined) delta.epoch = epoch;
    try {
      this.opts.loader!.applyDelta(delta);
      this.refused = null;
    } catch (err) {
      this.refused = { version: read.version, epoch: state.epoch };
      this.fullNeeded = true;
      this.fail('snapshot not published: it does not build or load', err, false);
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
      this.fail(`delta ${delta.from}→${delta.version} not published: the bus is unreachable; retrying`, err, true);
      return 'done';
    }
    if (!stored) {
      if (!head || (head.epoch ?? null) !== state.epoch || head.version < delta.version) return 'full';
      if (head.version === delta.version && head.hash !== delta.hash) return 'full';
      // another replica published this version, or a later one, first
      if (head.version > delta.version) this.pending = true;
      else this.published(delta, started);
      return 'done';
    }
    this.published(delta, started);
    this.deltasSinceStore++;
    this.scheduleStore();
    return 'done';
  }

  /**
   * The full snapshot for joining data planes is stored when writes pause (or every so many deltas), from the
   * configuration kept in memory: never rebuilt from the database per write.
   */
  private scheduleStore(): void {
    if (this.stopped) return;
    if (this.storeTimer) clearTimeout(this.storeTimer);
    const every = this.opts.snapshotStoreEveryDeltas ?? 10_000;
    const delay = this.deltasSinceStore >= every ? 0 : (this.opts.snapshotStoreIdleMs ?? 1000);
    this.storeTimer = setTimeout(() => {
      this.storeTimer = null;
      this.storing ??= this.storeSnapshot().finally(() => (this.storing = null));
    }, delay);
    this.storeTimer.unref();
  }

  private async storeSnapshot(): Promise<void> {
    const state = this.state;
    if (!state || this.stopped || this.deltasSinceStore === 0) return;
    const count = this.deltasSinceStore;
    const signed = await signSnapshotAsync(state.toSnapshot(), this.keys);
    try {
      await this.opts.bus.storeSnapshot(signed);
      this.lastSigned = signed;
      this.deltasSinceStore = Math.max(0, this.deltasSinceStore - count);
    } catch (err) {
      this.opts.log.warn('full snapshot not stored: the bus is unreachable; trying again later', { error: err instanceof Error ? err.message : String(err) });
      this.scheduleStore();
    }
  }

  /** reports a configuration that could not be read from the database (unreachable, or a failing query) */
  private readFailed(err: unknown): void {
    if (isDatabaseUnreachable(err)) {
      this.databaseReachable(false, err);
      this.fail('snapshot not published: the database is unreachable; publishing as soon as it is back', err, true);
    } else {
      this.fail('snapshot not published: the configuration cannot be read from the database', err, true);
    }
  }

  /** Reads, builds and checks the snapshot of the latest committed state; null (after reporting why) when it cannot. */
  private async build(): Promise<Snapshot | null> {
    let read: Awaited<ReturnType<typeof readSnapshotConfig>>;
    try {
      read = await readSnapshotConfig(this.opts.store, { plugins: this.opts.plugins, keyring: this.opts.keyring, tls: this.opts.tls });
    } catch (err) {
      this.readFailed(err);
      return null;
    }
    this.databaseReachable(true);
    try {
      const snapshot = await buildSnapshotInSlices(read.version, read.config);
      if (read.epoch) snapshot.epoch = read.epoch;
      if (this.opts.loader) this.opts.loader.load(snapshot);
      else this.opts.check(snapshot);
      this.refused = null;
      return snapshot;
    } catch (err) {
      this.refused = { version: read.version, epoch: read.epoch };
      this.fail('snapshot not published: it does not build or load', err, false);
      return null;
    }
  }

  private databaseReachable(reachable: boolean, err?: unknown): void {
    this.record.databaseReachable(reachable, err);
  }

  private fail(message: string, err: unknown, retry: boolean): void {
    this.record.failed(message, err instanceof Error ? err.message : String(err));
    this.opts.onFailed?.(message);
    if (!retry || this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.trigger();
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 2000);
  }

  /** Publishes again unless the bus's head is exactly what was last published and that is the database's state. */
  private async reconcile(): Promise<void> {
    if (this.stopped || this.inFlight || this.retryTimer) return;
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
      this.databaseReachable(true);
    } catch (err) {
      if (isDatabaseUnreachable(err)) this.databaseReachable(false, err);
      return;
    }
    const inSync = this.record.inSync(head, version, epoch);
    const refused = this.refused !== null && this.refused.version === version && this.refused.epoch === epoch;
    if (!inSync && !refused) await this.trigger();
    else if (inSync && ++this.reconcileRounds % this.fullCheckEvery() === 0) {
      await this.checkStoredSnapshot();
      if (this.captureReady && version > CHANGES_KEPT_VERSIONS) await pruneChanges(this.opts.store.db, version - CHANGES_KEPT_VERSIONS).catch(() => {});
    }
  }

  /** a large stored snapshot (a megabyte and more) is compared once a minute, a small one every fifth round */
  private fullCheckEvery(): number {
    return (this.lastSigned?.payload.length ?? 0) > 1_000_000 ? FULL_CHECK_EVERY * 12 : FULL_CHECK_EVERY;
  }

  /**
   * The head is ours, but is the stored snapshot? One written over it alone (data planes refuse it, and a data plane
   * starting without a cache would have nothing to load) is replaced by the one published.
   */
  private async checkStoredSnapshot(): Promise<void> {
    const ours = this.lastSigned;
    if (!ours) return;
    let why: string | null = null;
    try {
      const stored = await this.opts.bus.fetchLatest();
      if (!stored) why = 'the snapshot is missing';
      else if (stored.payload !== ours.payload || stored.signature !== ours.signature || stored.version !== ours.version) {
        // another replica may have stored a later one of the same epoch: that is fine when it is genuine
        const genuine = (() => {
          try {
            const snapshot = verifySnapshot(stored, this.keys, GENUINE_UNSEALED);
            return (snapshot.epoch ?? null) === (ours.epoch ?? null) && snapshot.version >= ours.version;
          } catch {
            return false;
          }
        })();
        if (!genuine) why = 'the stored snapshot is not the one its head announces';
      }
    } catch (err) {
      if (!(err instanceof SnapshotVerificationError)) return; // bus unreachable: next round
      why = err.message;
    }
    if (!why || this.stopped || this.inFlight) return;
    if (this.opts.loader && this.state && this.state.version !== ours.version) {
      // the head has moved on by deltas: a full snapshot of the current version replaces the stored one
      this.record.event('forged_head', `${why}; replaced with a signed snapshot of version ${this.state.version}`, { version: this.state.version, epoch: this.state.epoch });
      const signed = signSnapshot(this.state.toSnapshot(), this.keys);
      await this.opts.bus.publish(signed, { replace: true }).then(() => (this.lastSigned = signed)).catch(() => {});
      return;
    }
    this.record.event('forged_head', `${why}; replaced with the signed snapshot of version ${ours.version}`, { version: ours.version, epoch: ours.epoch ?? null });
    await this.opts.bus.publish(ours, { replace: true }).catch(() => {});
  }
}
