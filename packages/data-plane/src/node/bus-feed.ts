import type { ConfigFeed, ConfigSink } from './config-feed';
import { DataPlaneSync, type DataPlaneSyncOptions, type DataPlaneSyncStatus } from './follow/data-plane-sync';

/** The bus feed's settings: DataPlaneSync's, less what the node itself answers (apply, version, hash). */
export type BusFeedOptions = Omit<DataPlaneSyncOptions, 'apply' | 'applyDelta' | 'relabel' | 'currentVersion' | 'currentHash'>;

/**
 * A node fed by the config bus: DataPlaneSync receives, verifies, decodes and orders snapshots and deltas, keeps the
 * disk cache and sends the heartbeats; the node compiles and swaps what it hands over.
 */
export class BusFeed implements ConfigFeed {
  private sync: DataPlaneSync | null = null;

  constructor(private readonly options: BusFeedOptions) {}

  async open(sink: ConfigSink): Promise<void> {
    if (this.sync) throw new Error('the bus feed is already open');
    this.sync = new DataPlaneSync({
      ...this.options,
      apply: (snapshot) => sink.load(snapshot),
      applyDelta: (delta) => sink.applyDelta(delta),
      relabel: (version) => sink.relabel(version),
      currentVersion: () => sink.serving()?.version ?? null,
      currentHash: () => sink.serving()?.hash ?? null,
    });
    // the cached config is in place before the proxy port opens: no request after a restart meets an empty config
    await this.sync.restoreFromCache();
  }

  follow(): Promise<void> {
    return this.opened().start();
  }

  async close(): Promise<void> {
    await this.sync?.stop();
  }

  /** what the node serves and how it got there (`sync` of the status endpoints) */
  status(): DataPlaneSyncStatus {
    return this.opened().status();
  }

  private opened(): DataPlaneSync {
    if (!this.sync) throw new Error('the bus feed is not open');
    return this.sync;
  }
}
