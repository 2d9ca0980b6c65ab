import { EMPTY_CONFIG_HASH, type SignedDelta, type SignedSnapshot, type Snapshot, type SnapshotAnnouncement, type SnapshotDelta } from '@gatehouse/core';
import type { BusSubscription, ConfigBus, DataPlaneReport } from './bus';
import { dataPlaneIdentity, type DataPlaneIdentity } from './data-plane-identity';
import { Heartbeat, PeriodicTasks } from './heartbeat';
import type { SyncLogger } from './logger';
import { deriveSnapshotKeys, type SnapshotKeys } from './sealing';
import { isSealed, verifyDelta, verifySnapshotInSlices, type VerifyOptions } from './signing';
import { SnapshotDiskCache } from './snapshot-disk-cache';
import { succession, type ConfigPosition } from './snapshot-order';
import { deltaPlace, onAnnouncement, onDelta, onKeptDeltas, onSnapshot, onStoredHead, type Serving } from './sync-rules';

export type SnapshotSource = 'cache' | 'bus';

export interface DataPlaneSyncOptions {
  bus: ConfigBus;
  /** the cluster secret the control plane signs with */
  secret: string;
  /** where the last good snapshot is kept across restarts; null for none */
  cacheFile: string | null;
  /** validate + compile + swap; throws when the snapshot cannot be loaded (the old config keeps serving) */
  apply(snapshot: Snapshot): void | Promise<void>;
  /**
   * applies a delta that follows the serving config to it and swaps, synchronously; throws when it would not apply
   * (the serving config is kept and the full snapshot is loaded instead). Without it, every version is a full fetch.
   */
  applyDelta?(delta: SnapshotDelta): void;
  /** moves the serving config to another version of the same content (equal hash), without compiling anything */
  relabel?(version: number, epoch: string | null): void;
  /** the version being served, or null (or a negative number) while nothing is loaded */
  currentVersion(): number | null;
  /** the hash being served; defaults to the hash of the last snapshot this object applied */
  currentHash?(): string | null;
  /** for heartbeats; hostname, ip and version default to this machine's */
  identity: Partial<DataPlaneIdentity> & { id: string };
  logger: SyncLogger;
  /** heartbeat period in ms (default 10000; 0 turns heartbeats off) */
  heartbeatIntervalMs?: number;
  /** period of the safety-net check against the latest stored version in ms (default 30000; 0 turns it off) */
  refetchIntervalMs?: number;
  /** first retry delay after a failed fetch in ms, doubling up to `maxFetchRetryMs` (default 500; 0 turns retries off) */
  fetchRetryMs?: number;
  /** cap of the retry delay in ms (default 5000) */
  maxFetchRetryMs?: number;
  /** called after each successful apply */
  onApplied?(snapshot: Snapshot, source: SnapshotSource): void;
  /** called after each delta applied */
  onDeltaApplied?(delta: SnapshotDelta, source: SnapshotSource): void;
}

export interface DataPlaneSyncStatus {
  config_version: number | null;
  config_hash: string | null;
  /** the cluster epoch of the serving config (null: none, or a control plane that sends none) */
  config_epoch: string | null;
  /** where the serving config came from */
  source: SnapshotSource | null;
  /** epoch ms of the last successful apply */
  last_applied_at: number | null;
  /** epoch ms of the last successful fetch from the bus */
  last_fetched_at: number | null;
  /** the last fetch or apply failure, cleared by the next success */
  last_error: string | null;
}

type Outcome = 'applied' | 'unchanged' | 'stale' | 'rejected';

/**
 * Snapshots and deltas signed but not sealed (control planes of the release before sealing) are still loaded, so data
 * planes can be upgraded first; each is logged, and a disk cache holding one is replaced by the control plane's first
 * sealed snapshot.
 */
const VERIFY: VerifyOptions = { acceptUnsealed: true };

/**
 * The data plane's side of the snapshot protocol: serve the disk cache at once, follow announcements, fetch the
 * full snapshot at start, on every newer version and after every reconnect, and keep the last good config
 * whenever a snapshot is refused or the bus is down.
 */
export class DataPlaneSync {
  private readonly identity: DataPlaneIdentity;
  /** derived once from the cluster secret */
  private readonly keys: SnapshotKeys;
  /** the last good config on disk; null without a cache file */
  private readonly cache: SnapshotDiskCache | null;
  private readonly heartbeat: Heartbeat;
  private readonly periodic = new PeriodicTasks();
  private unsealedWarned = false;
  private subscription: BusSubscription | null = null;
  private fetching: Promise<void> | null = null;
  private fetchAgain = false;
  private started = false;
  private cacheRestored = false;
  private stopped = false;
  private fetchFailures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** set when a delta did not apply: the next fetch loads the stored snapshot even when it is not newer */
  private rebuild = false;
  private readonly state: DataPlaneSyncStatus = {
    config_version: null,
    config_hash: null,
    config_epoch: null,
    source: null,
    last_applied_at: null,
    last_fetched_at: null,
    last_error: null,
  };

  constructor(private readonly options: DataPlaneSyncOptions) {
    if (!options.secret) throw new Error('DataPlaneSync needs the cluster secret');
    this.keys = deriveSnapshotKeys(options.secret);
    this.identity = dataPlaneIdentity(options.identity);
    this.heartbeat = new Heartbeat(options.bus, () => this.report(), options.logger);
    this.cache =
      options.cacheFile === null
        ? null
        : new SnapshotDiskCache({
            file: options.cacheFile,
            keepsDeltas: options.applyDelta !== undefined,
            keys: this.keys,
            logger: options.logger,
            fetchStored: () => options.bus.fetchLatest(),
            servingEpoch: () => this.state.config_epoch,
          });
  }

  /** the disk cache holds a snapshot or delta that is not sealed (written before the control plane sealed them) */
  private get cacheUnsealed(): boolean {
    return this.cache?.unsealed ?? false;
  }

  /**
   * Loads the disk cache (so the data plane can serve at once), subscribes, then fetches the latest snapshot.
   * Never rejects because the bus is down: the subscription keeps trying and a reconnect triggers a fetch.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('DataPlaneSync already started');
    this.started = true;
    await this.restoreFromCache();
    try {
      this.subscription = await this.options.bus.subscribe({
        onAnnouncement: (announcement) => this.onAnnouncement(announcement),
        onReconnect: () => {
          this.options.logger.info('config bus reconnected; fetching the latest snapshot');
          void this.syncNow();
        },
      });
    } catch (error) {
      this.options.logger.error('cannot subscribe to config announcements', { error: (error as Error).message });
    }
    await this.syncNow();

    const heartbeatMs = this.options.heartbeatIntervalMs ?? 10000;
    if (heartbeatMs > 0) this.periodic.every(heartbeatMs, () => this.beat());
    const refetchMs = this.options.refetchIntervalMs ?? 30000;
    if (refetchMs > 0) this.periodic.every(refetchMs, () => this.checkLatest());
    void this.beat();
  }

  /**
   * Loads the disk cache, once; `start()` does it too. A data plane calls it before it opens its proxy port, so the
   * first request after a restart meets the cached config instead of an empty one.
   */
  async restoreFromCache(): Promise<void> {
    if (this.cacheRestored) return;
    this.cacheRestored = true;
    await this.loadCache();
  }

  /** Stops timers and the subscription; the bus itself belongs to the caller. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.periodic.stop();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const cacheStopped = this.cache?.stop();
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close().catch(() => {});
    await this.fetching?.catch(() => {});
    await cacheStopped;
  }

  /** Fetches the latest snapshot and applies it if newer. Concurrent calls share one fetch, plus one more after it. */
  syncNow(): Promise<void> {
    if (this.fetching) {
      this.fetchAgain = true;
      return this.fetching;
    }
    this.fetching = (async () => {
      try {
        do {
          this.fetchAgain = false;
          await this.fetchAndApply();
        } while (this.fetchAgain && !this.stopped);
      } finally {
        this.fetching = null;
      }
    })();
    return this.fetching;
  }

  status(): DataPlaneSyncStatus {
    return { ...this.state, config_version: this.servingVersion(), config_hash: this.servingHash() };
  }

  /** What the heartbeat reports. */
  report(): DataPlaneReport {
    const version = this.servingVersion();
    return {
      ...this.identity,
      config_version: version ?? 0,
      config_hash: this.servingHash() ?? EMPTY_CONFIG_HASH,
      last_seen: Math.floor(Date.now() / 1000),
      sync_status: version === null ? 'unknown' : 'normal',
    };
  }

  private onAnnouncement(announcement: SnapshotAnnouncement): void {
    if (this.stopped) return;
    const action = onAnnouncement(announcement, this.serving(), { followsDeltas: this.options.applyDelta !== undefined, rebuilding: this.rebuild, cacheUnsealed: this.cacheUnsealed });
    if (action.do === 'apply-delta') return this.onDelta(announcement.delta!);
    // a fetch of the serving version held in clear on disk rewrites the cache sealed, once the bus stores it so
    if (action.do === 'fetch') return void this.syncNow();
    const details = { announced: announcement.version, epoch: announcement.epoch, serving: this.servingVersion(), hash: announcement.hash };
    this.options.logger.debug?.(
      action.why === 'same hash' ? 'announced config has the serving hash; nothing to load' : 'ignoring announcement of a config that does not follow the serving one',
      details,
    );
  }

  /**
   * An announced delta: applied at once when it follows the serving version; ignored when it is not newer (a
   * duplicate, or one overtaken); anything else (a gap, another epoch, a delta that does not verify or apply) fetches
   * the stored snapshot and the kept deltas instead.
   */
  private onDelta(signed: SignedDelta): void {
    const action = onDelta(signed, this.servingPosition());
    if (action === 'ignore') return;
    if (action === 'fetch' || this.applyOneDelta(signed, 'bus') !== 'applied') void this.syncNow();
  }

  /** Verifies and applies one delta if it follows the serving version; 'gap' when it does not. */
  private applyOneDelta(signed: SignedDelta, source: SnapshotSource): Outcome | 'gap' {
    const serving = this.servingPosition();
    const place = deltaPlace(signed, serving);
    if (place !== 'next' || serving === null) return place === 'next' ? 'gap' : place;
    let delta: SnapshotDelta;
    try {
      delta = verifyDelta(signed, this.keys, VERIFY);
    } catch (error) {
      // not from the control plane: refused; the bus is asked what the head really is
      this.state.last_error = `delta ${signed.from}→${signed.version} rejected: ${(error as Error).message}`;
      this.options.logger.error('delta rejected; the serving config is kept', { source, from: signed.from, version: signed.version, error: (error as Error).message });
      return 'rejected';
    }
    try {
      this.options.applyDelta!(delta);
    } catch (error) {
      this.state.last_error = `delta ${signed.from}→${signed.version} rejected: ${(error as Error).message}`;
      this.options.logger.error('delta rejected; the serving config is kept and the full snapshot fetched', {
        source,
        from: signed.from,
        version: signed.version,
        serving: serving.version,
        error: (error as Error).message,
      });
      this.rebuild = true;
      return 'rejected';
    }
    this.state.config_version = delta.version;
    this.state.config_hash = delta.hash;
    this.state.config_epoch = delta.epoch ?? null;
    this.state.source = source;
    this.state.last_applied_at = Date.now();
    this.state.last_error = null;
    if (!isSealed(signed)) this.warnUnsealed('delta', source, signed.version);
    if (source === 'bus') this.cache?.appendDelta(signed);
    try {
      this.options.onDeltaApplied?.(delta, source);
    } catch (error) {
      this.options.logger.error('onDeltaApplied handler failed', { error: (error as Error).message });
    }
    return 'applied';
  }

  /** Applies kept deltas in order from the serving version; false when they left a gap or one did not apply. */
  private applyChain(deltas: readonly SignedDelta[], source: SnapshotSource): boolean {
    for (const signed of deltas) {
      const outcome = this.applyOneDelta(signed, source);
      if (outcome === 'gap' || outcome === 'rejected') return false;
    }
    return true;
  }

  /** The safety net for a lost announcement: compare the stored version, fetch only when it is newer. */
  private async checkLatest(): Promise<void> {
    try {
      const head = await this.options.bus.latestAnnouncement();
      if (head && this.isNewer(head)) {
        this.options.logger.info('a newer snapshot is stored than the one serving; fetching it', { stored: head.version, serving: this.servingVersion() });
        await this.syncNow();
      }
    } catch (error) {
      this.options.logger.debug?.('periodic snapshot check failed', { error: (error as Error).message });
    }
  }

  private async fetchAndApply(): Promise<void> {
    if (this.stopped) return;
    let signed: SignedSnapshot | null;
    try {
      signed = await this.options.bus.fetchLatest();
      this.state.last_fetched_at = Date.now();
    } catch (error) {
      this.state.last_error = `fetch failed: ${(error as Error).message}`;
      const log = this.fetchFailures === 0 ? this.options.logger.warn : this.options.logger.debug;
      log?.call(this.options.logger, 'cannot fetch the latest snapshot; keeping the serving config and retrying', {
        error: (error as Error).message,
        serving: this.servingVersion(),
      });
      this.fetchFailures++;
      this.scheduleRetry();
      return;
    }
    if (this.fetchFailures > 0) this.options.logger.info('fetching snapshots works again');
    this.fetchFailures = 0;
    if (!signed) {
      this.options.logger.info('no snapshot published yet');
      return;
    }
    if (this.cacheUnsealed && isSealed(signed) && succession(signed, this.servingPosition()) === 'same') {
      await this.resealCache(signed);
      return;
    }
    if (!this.options.applyDelta) {
      await this.accept(signed, 'bus');
      return;
    }
    await this.followStored(signed);
  }

  /**
   * The bus holds the serving version sealed while the disk cache holds it in clear (written before the control plane
   * was upgraded): the cache becomes the sealed snapshot, checked in full first.
   */
  private async resealCache(signed: SignedSnapshot): Promise<void> {
    try {
      const snapshot = await verifySnapshotInSlices(signed, this.keys);
      if (snapshot.hash !== this.servingHash()) return;
    } catch (error) {
      this.options.logger.warn('the stored sealed snapshot does not verify; the disk cache is kept as it is', { error: (error as Error).message });
      return;
    }
    await this.cache?.writeSnapshot(signed);
    this.options.logger.info('disk cache rewritten with the sealed snapshot', { version: signed.version });
  }

  /** said once per process: a control plane of the earlier release publishes every version unsealed */
  private warnUnsealed(what: 'snapshot' | 'delta', source: SnapshotSource, version: number): void {
    if (this.unsealedWarned) return;
    this.unsealedWarned = true;
    this.options.logger.warn(`${what} loaded without sealing: upgrade the control plane so Redis and the disk cache hold no secret in clear`, { source, version });
  }

  /**
   * Brings the serving config to the head: by the kept deltas when they continue the serving version, else by the
   * stored snapshot and the deltas after it.
   */
  private async followStored(signed: SignedSnapshot): Promise<void> {
    const serving = this.servingPosition();
    const rebuild = this.rebuild;
    const plan = onStoredHead(signed, serving, rebuild);
    if (plan === 'keep-serving') {
      await this.accept(signed, 'bus'); // logs and keeps the serving config
      return;
    }
    try {
      if (plan === 'follow-deltas') {
        const deltas = await this.options.bus.fetchDeltas(serving!.version);
        const next = onKeptDeltas(deltas, serving!, signed);
        if (next === 'up-to-date' || (next === 'apply-chain' && this.applyChain(deltas, 'bus'))) return;
        if (next === 'retry') {
          this.state.last_error = `kept deltas start at ${deltas[0]!.from}, after the serving version ${serving!.version}`;
          this.fetchFailures++;
          this.scheduleRetry();
          return;
        }
      }
      const outcome = await this.accept(signed, 'bus', rebuild || this.rebuild);
      if (outcome === 'rejected') return;
      this.rebuild = false;
      const after = this.servingVersion() ?? signed.version;
      const deltas = await this.options.bus.fetchDeltas(after);
      if (!this.applyChain(deltas, 'bus')) {
        // the deltas after a fresh load do not apply either: try again later rather than at once
        this.fetchFailures++;
        this.scheduleRetry();
      }
    } catch (error) {
      this.state.last_error = `fetch failed: ${(error as Error).message}`;
      this.fetchFailures++;
      this.scheduleRetry();
    }
  }

  /**
   * A failed fetch is tried again with backoff: convergence after an outage must not hang on one reconnect
   * notice or wait for the periodic check.
   */
  private scheduleRetry(): void {
    const first = this.options.fetchRetryMs ?? 500;
    if (first <= 0 || this.stopped || !this.started || this.retryTimer) return;
    const delay = Math.min(first * 2 ** Math.min(this.fetchFailures - 1, 16), this.options.maxFetchRetryMs ?? 5000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.syncNow();
    }, delay);
    this.retryTimer.unref();
  }

  private async accept(signed: SignedSnapshot, source: SnapshotSource, rebuild = false): Promise<Outcome> {
    if (this.stopped) return 'stale';
    const serving = this.servingVersion();
    const action = onSnapshot(signed, { ...this.serving(), epoch: this.state.config_epoch }, rebuild);
    if (action.do === 'keep-serving' && action.why === 'older') {
      this.options.logger.warn('stored snapshot is older than the serving one; keeping the serving one', {
        stored: signed.version,
        stored_epoch: signed.epoch,
        serving,
        serving_epoch: this.state.config_epoch,
      });
      return 'stale';
    }
    if (action.do === 'keep-serving') return 'stale';
    // a new epoch with the serving hash is still loaded: the data plane must move to the epoch (a replay of the old
    // epoch is then refused), and compiling once per epoch change costs little
    if (action.do === 'relabel') {
      if (this.options.relabel) {
        this.options.relabel(signed.version, signed.epoch ?? null);
        this.state.config_version = signed.version;
        if (source === 'bus') await this.cache?.writeSnapshot(signed);
      }
      return 'unchanged';
    }

    let snapshot: Snapshot;
    try {
      snapshot = await verifySnapshotInSlices(signed, this.keys, VERIFY);
      // deltas may have moved the serving config on while the payload was decoded
      if (!rebuild && this.overtaken(signed)) return 'stale';
      await this.options.apply(snapshot);
    } catch (error) {
      this.state.last_error = `snapshot version ${signed.version} rejected: ${(error as Error).message}`;
      this.options.logger.error('snapshot rejected; the last good config keeps serving', {
        source,
        version: signed.version,
        serving,
        error: (error as Error).message,
      });
      return 'rejected';
    }

    if (action.newEpoch && serving !== null && !rebuild) {
      this.options.logger.warn('config from a new cluster epoch loaded (the control plane database was reset or restored)', {
        version: snapshot.version,
        epoch: snapshot.epoch,
        previous_version: serving,
        previous_epoch: this.state.config_epoch,
      });
    }
    this.state.config_version = snapshot.version;
    this.state.config_hash = snapshot.hash;
    this.state.config_epoch = snapshot.epoch ?? null;
    this.state.source = source;
    this.state.last_applied_at = Date.now();
    this.state.last_error = null;
    this.options.logger.info('config loaded', { source, version: snapshot.version, hash: snapshot.hash });
    if (!isSealed(signed)) this.warnUnsealed('snapshot', source, signed.version);
    if (source === 'bus') await this.cache?.writeSnapshot(signed);
    try {
      this.options.onApplied?.(snapshot, source);
    } catch (error) {
      this.options.logger.error('onApplied handler failed', { error: (error as Error).message });
    }
    if (this.started && !this.stopped) void this.beat();
    return 'applied';
  }

  /** Serves the disk cache: its snapshot, then the deltas kept after it, as far as they follow one another. */
  private async loadCache(): Promise<void> {
    const cache = this.cache;
    const signed = await cache?.readSnapshot();
    if (!cache || !signed) return;
    if ((await this.accept(signed, 'cache')) !== 'applied') return;
    cache.snapshotLoaded(signed);
    for (const delta of await cache.readDeltas()) {
      const outcome = this.applyOneDelta(delta, 'cache');
      cache.deltaLoaded(delta, outcome === 'applied' || outcome === 'stale');
      if (outcome === 'gap' || outcome === 'rejected') break;
    }
    this.rebuild = false;
  }

  private async beat(): Promise<void> {
    if (!this.stopped) await this.heartbeat.beat();
  }

  /** whether the serving config is now this snapshot's or a later one */
  private overtaken(signed: SignedSnapshot): boolean {
    const order = succession(signed, this.servingPosition());
    return order === 'same' || order === 'older-version' || order === 'older-epoch';
  }

  private isNewer(announcement: SnapshotAnnouncement): boolean {
    const order = succession(announcement, this.servingPosition());
    return order === 'newer-epoch' || (order === 'newer-version' && announcement.hash !== this.servingHash());
  }

  private serving(): Serving {
    return { position: this.servingPosition(), hash: this.servingHash() };
  }

  private servingPosition(): ConfigPosition | null {
    const version = this.servingVersion();
    return version === null ? null : { version, epoch: this.state.config_epoch };
  }

  private servingVersion(): number | null {
    const version = this.options.currentVersion();
    return version === null || version === undefined || version < 0 ? null : version;
  }

  private servingHash(): string | null {
    return this.options.currentHash ? this.options.currentHash() : this.state.config_hash;
  }
}
