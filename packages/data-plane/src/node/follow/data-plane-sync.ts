import type { SignedDelta, SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
import { dataPlaneIdentity, deriveSnapshotKeys, type BusSubscription, type DataPlaneIdentity, type DataPlaneReport, type SnapshotKeys } from '@gatehouse/sync';
import { SnapshotDiskCache } from '../disk-cache';
import { Heartbeat, PeriodicTasks } from '../heartbeat';
import type { DataPlaneSyncOptions, DataPlaneSyncStatus } from './data-plane-sync-options';
import { FetchLoop } from './fetch-loop';
import { next, type SyncAction, type SyncEvent } from './ordering';
import { ServingRecord } from './serving-record';
import { SignedLoader } from './signed-loader';

export type { DataPlaneSyncOptions, DataPlaneSyncStatus, SnapshotSource } from './data-plane-sync-options';

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
  private readonly loader: SignedLoader;
  private readonly record: ServingRecord;
  private readonly fetches: FetchLoop;
  private subscription: BusSubscription | null = null;
  private started = false;
  private cacheRestored = false;
  private stopped = false;

  constructor(private readonly options: DataPlaneSyncOptions) {
    if (!options.secret) throw new Error('DataPlaneSync needs the cluster secret');
    this.keys = deriveSnapshotKeys(options.secret);
    this.identity = dataPlaneIdentity(options.identity);
    this.record = new ServingRecord(options.currentVersion, options.currentHash);
    const retry = { firstMs: options.fetchRetryMs ?? 500, maxMs: options.maxFetchRetryMs ?? 5000 };
    this.fetches = new FetchLoop(() => this.fetchAndApply(), retry, () => ({ started: this.started, stopped: this.stopped }));
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
            servingEpoch: () => this.record.epoch,
          });
    this.loader = new SignedLoader({ options, keys: this.keys, record: this.record, cache: this.cache, phase: () => ({ started: this.started, stopped: this.stopped }), beat: () => this.beat() });
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
    const cacheStopped = this.cache?.stop();
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close().catch(() => {});
    await this.fetches.stop();
    await cacheStopped;
  }

  /** Fetches the latest snapshot and applies it if newer. Concurrent calls share one fetch, plus one more after it. */
  syncNow(): Promise<void> {
    return this.fetches.now();
  }

  status(): DataPlaneSyncStatus {
    return this.record.status();
  }

  /** What the heartbeat reports. */
  report(): DataPlaneReport {
    return this.record.report(this.identity);
  }

  private onAnnouncement(announcement: SnapshotAnnouncement): void {
    if (this.stopped) return;
    for (const action of next(this.loader.state(), { on: 'announcement', announcement })) {
      if (action.do === 'apply-delta') {
        // an announced delta that does not apply falls back on the stored snapshot and the kept deltas
        if (this.loader.applyDelta(announcement.delta!, 'bus') !== 'applied') this.act(next(this.loader.state(), { on: 'chain-refused', stage: 'announced' }));
      } else if (action.do === 'ignore' && action.why !== 'stale delta') {
        const details = { announced: announcement.version, epoch: announcement.epoch, serving: this.record.version(), hash: announcement.hash };
        const message = action.why === 'same hash' ? 'announced config has the serving hash; nothing to load' : 'ignoring announcement of a config that does not follow the serving one';
        this.options.logger.debug?.(message, details);
      } else {
        // a fetch of the serving version held in clear on disk rewrites the cache sealed, once the bus stores it so
        this.act([action]);
      }
    }
  }

  /** Carries out the actions that need nothing but the sync: a fetch, a later try. */
  private act(actions: SyncAction[]): void {
    for (const action of actions) {
      if (action.do === 'fetch') void this.syncNow();
      if (action.do === 'retry') {
        if (action.error) this.record.failed(action.error);
        this.fetches.failed();
      }
    }
  }

  /** The safety net for a lost announcement: compare the stored version, fetch only when it is newer. */
  private async checkLatest(): Promise<void> {
    try {
      const head = await this.options.bus.latestAnnouncement();
      if (head && next(this.loader.state(), { on: 'stored-version', head })[0]?.do === 'fetch') {
        this.options.logger.info('a newer snapshot is stored than the one serving; fetching it', { stored: head.version, serving: this.record.version() });
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
      this.record.fetched();
    } catch (error) {
      this.record.failed(`fetch failed: ${(error as Error).message}`);
      const log = this.fetches.failures === 0 ? this.options.logger.warn : this.options.logger.debug;
      log?.call(this.options.logger, 'cannot fetch the latest snapshot; keeping the serving config and retrying', {
        error: (error as Error).message,
        serving: this.record.version(),
      });
      this.fetches.failed();
      return;
    }
    if (this.fetches.failures > 0) this.options.logger.info('fetching snapshots works again');
    this.fetches.failures = 0;
    if (!signed) {
      this.options.logger.info('no snapshot published yet');
      return;
    }
    try {
      await this.follow(signed, { on: 'stored-head', head: signed });
    } catch (error) {
      this.record.failed(`fetch failed: ${(error as Error).message}`);
      this.fetches.failed();
    }
  }

  /**
   * Brings the serving config to the bus's stored snapshot (`signed`): carries out what the ordering rules make of
   * `event`, and follows each step's outcome in turn (by the kept deltas when they continue the serving version, else
   * by the stored snapshot and the deltas after it).
   */
  private async follow(signed: SignedSnapshot, event: SyncEvent, kept: readonly SignedDelta[] = []): Promise<void> {
    for (const action of next(this.loader.state(), event)) {
      switch (action.do) {
        case 'reseal':
          await this.loader.reseal(signed);
          break;
        case 'keep-serving':
          this.loader.refuseOlder(signed);
          break;
        case 'fetch-deltas': {
          const deltas = await this.options.bus.fetchDeltas(action.after);
          await this.follow(signed, { on: 'kept-deltas', kept: deltas, head: signed }, deltas);
          break;
        }
        case 'apply-chain':
          if (!this.loader.applyChain(kept, 'bus')) await this.follow(signed, { on: 'chain-refused', stage: 'kept' });
          break;
        case 'load-full': {
          if ((await this.loader.load(signed, 'bus', action.rebuild)) === 'rejected') return;
          this.loader.rebuild = false;
          await this.follow(signed, { on: 'snapshot-loaded', version: signed.version });
          break;
        }
        case 'catch-up':
          // the deltas after a fresh load that do not apply either are tried again later rather than at once
          if (!this.loader.applyChain(await this.options.bus.fetchDeltas(action.after), 'bus')) await this.follow(signed, { on: 'chain-refused', stage: 'after-load' });
          break;
        default:
          this.act([action]);
      }
    }
  }

  /** Serves the disk cache: its snapshot, then the deltas kept after it, as far as they follow one another. */
  private async loadCache(): Promise<void> {
    const cache = this.cache;
    const signed = await cache?.readSnapshot();
    if (!cache || !signed) return;
    if ((await this.loader.load(signed, 'cache')) !== 'applied') return;
    cache.snapshotLoaded(signed);
    for (const delta of await cache.readDeltas()) {
      const outcome = this.loader.applyDelta(delta, 'cache');
      cache.deltaLoaded(delta, outcome === 'applied' || outcome === 'stale');
      if (outcome === 'gap' || outcome === 'rejected') break;
    }
    this.loader.rebuild = false;
  }

  private async beat(): Promise<void> {
    if (!this.stopped) await this.heartbeat.beat();
  }
}
