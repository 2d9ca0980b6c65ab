import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EMPTY_CONFIG_HASH, type SignedSnapshot, type Snapshot, type SnapshotAnnouncement } from '@gatehouse/core';
import type { BusSubscription, ConfigBus, DataPlaneReport } from './bus';
import { dataPlaneIdentity, type DataPlaneIdentity } from './data-plane-identity';
import type { SyncLogger } from './logger';
import { parseSignedSnapshot, verifySnapshot } from './signing';
import { succession, type ConfigPosition } from './snapshot-order';

export type SnapshotSource = 'cache' | 'bus';

export interface DataPlaneSyncOptions {
  bus: ConfigBus;
  /** the cluster secret the control plane signs with */
  secret: string;
  /** where the last good snapshot is kept across restarts; null for none */
  cacheFile: string | null;
  /** validate + compile + swap; throws when the snapshot cannot be loaded (the old config keeps serving) */
  apply(snapshot: Snapshot): void | Promise<void>;
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
 * The data plane's side of the snapshot protocol: serve the disk cache at once, follow announcements, fetch the
 * full snapshot at start, on every newer version and after every reconnect, and keep the last good config
 * whenever a snapshot is refused or the bus is down.
 */
export class DataPlaneSync {
  private readonly identity: DataPlaneIdentity;
  private subscription: BusSubscription | null = null;
  private timers: NodeJS.Timeout[] = [];
  private fetching: Promise<void> | null = null;
  private fetchAgain = false;
  private started = false;
  private cacheRestored = false;
  private stopped = false;
  private heartbeatFailing = false;
  private fetchFailures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
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
    this.identity = dataPlaneIdentity(options.identity);
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
    if (heartbeatMs > 0) this.every(heartbeatMs, () => this.heartbeat());
    const refetchMs = this.options.refetchIntervalMs ?? 30000;
    if (refetchMs > 0) this.every(refetchMs, () => this.checkLatest());
    void this.heartbeat();
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
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close().catch(() => {});
    await this.fetching?.catch(() => {});
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
    const order = succession(announcement, this.servingPosition());
    if (order !== 'newer-version' && order !== 'newer-epoch') {
      this.options.logger.debug?.('ignoring announcement of a config that does not follow the serving one', {
        announced: announcement.version,
        epoch: announcement.epoch,
        serving: this.servingVersion(),
      });
      return;
    }
    if (order === 'newer-version' && announcement.hash === this.servingHash()) {
      this.options.logger.debug?.('announced config has the serving hash; nothing to load', { announced: announcement.version, hash: announcement.hash });
      return;
    }
    void this.syncNow();
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
    await this.accept(signed, 'bus');
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

  private async accept(signed: SignedSnapshot, source: SnapshotSource): Promise<Outcome> {
    if (this.stopped) return 'stale';
    const serving = this.servingVersion();
    const order = succession(signed, this.servingPosition());
    if (order === 'older-version' || order === 'older-epoch') {
      this.options.logger.warn('stored snapshot is older than the serving one; keeping the serving one', {
        stored: signed.version,
        stored_epoch: signed.epoch,
        serving,
        serving_epoch: this.state.config_epoch,
      });
      return 'stale';
    }
    if (order === 'same') return 'stale';
    // a new epoch with the serving hash is still loaded: the data plane must move to the epoch (a replay of the old
    // epoch is then refused), and compiling once per epoch change costs little
    if (order === 'newer-version' && signed.hash === this.servingHash()) return 'unchanged';

    let snapshot: Snapshot;
    try {
      snapshot = verifySnapshot(signed, this.options.secret);
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

    if (order === 'newer-epoch' && serving !== null) {
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
    if (source === 'bus') await this.writeCache(signed);
    try {
      this.options.onApplied?.(snapshot, source);
    } catch (error) {
      this.options.logger.error('onApplied handler failed', { error: (error as Error).message });
    }
    if (this.started && !this.stopped) void this.heartbeat();
    return 'applied';
  }

  private async loadCache(): Promise<void> {
    const file = this.options.cacheFile;
    if (!file) return;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.options.logger.warn('cannot read the snapshot cache', { file, error: (error as Error).message });
      }
      return;
    }
    try {
      await this.accept(parseSignedSnapshot(text), 'cache');
    } catch (error) {
      this.options.logger.error('snapshot cache unusable', { file, error: (error as Error).message });
    }
  }

  /** temp file + rename: a crash mid-write never leaves a torn cache; 0600 because the snapshot holds secrets */
  private async writeCache(signed: SignedSnapshot): Promise<void> {
    const file = this.options.cacheFile;
    if (!file) return;
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const handle = await open(temp, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(signed));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      this.options.logger.warn('cannot write the snapshot cache', { file, error: (error as Error).message });
    }
  }

  private async heartbeat(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.options.bus.reportDataPlane(this.report());
      if (this.heartbeatFailing) this.options.logger.info('data plane heartbeat delivered again');
      this.heartbeatFailing = false;
    } catch (error) {
      if (!this.heartbeatFailing) this.options.logger.warn('data plane heartbeat failed', { error: (error as Error).message });
      this.heartbeatFailing = true;
    }
  }

  private every(ms: number, task: () => Promise<void>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running || this.stopped) return;
      running = true;
      task().finally(() => (running = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  private isNewer(announcement: SnapshotAnnouncement): boolean {
    const order = succession(announcement, this.servingPosition());
    return order === 'newer-epoch' || (order === 'newer-version' && announcement.hash !== this.servingHash());
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
