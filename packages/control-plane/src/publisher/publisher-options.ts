import type { Snapshot, SnapshotDelta } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { ConfigBus } from '@gatehouse/sync';
import type { Keyring } from '../keys/keyring';
import type { ConfigStore } from '../store/config-store';
import type { PublisherLogger } from './publication-record';

/** What a snapshot publisher reads from, publishes to, checks with and tells. */
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
