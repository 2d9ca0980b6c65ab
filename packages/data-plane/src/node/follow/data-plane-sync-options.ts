import type { Snapshot, SnapshotDelta } from '@gatehouse/core';
import type { ConfigBus, DataPlaneIdentity, SyncLogger } from '@gatehouse/sync';

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
