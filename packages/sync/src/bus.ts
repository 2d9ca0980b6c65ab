import type { SignedDelta, SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';

/** What a data plane reports about itself (heartbeat), listed by the control plane. */
export interface DataPlaneReport {
  id: string;
  hostname: string;
  ip: string;
  version: string;
  config_version: number;
  config_hash: string;
  /** epoch seconds */
  last_seen: number;
  sync_status: 'unknown' | 'normal';
  /** Kong's `cluster_dp_labels` of the data plane */
  labels?: Record<string, string>;
  /** the plugins the data plane can run */
  plugins?: string[];
}

/** A report as listed back: `ttl` is the seconds left before the row is purged (Kong's `cluster_data_plane_purge_delay`). */
export interface ListedDataPlane extends DataPlaneReport {
  ttl: number;
}

export interface PublishOptions {
  /**
   * Store the snapshot whatever the stored head is. The control plane uses it only after it found the stored head
   * unsigned, signed with another secret, or otherwise not one it can build on (decision 19).
   */
  replace?: boolean;
}

/** Default lifetime of a data plane's row after its last report: 14 days, as Kong's purge delay. */
export const DEFAULT_DATA_PLANE_TTL_SECONDS = 14 * 24 * 3600;

export interface BusSubscription {
  close(): Promise<void>;
}

/**
 * The snapshot transport between the control plane and the data planes.
 * Implementations: Redis (cluster) and in-memory (embedded mode); same semantics.
 */
export interface ConfigBus {
  /**
   * Stores the full signed snapshot as the latest (dropping kept deltas), then announces `{version, hash, epoch}`. A snapshot older than
   * the stored one (an earlier epoch, or a lower version of the same epoch: a slower control plane replica) is dropped
   * without announcement, unless `replace` is set. Resolves true when stored. Rejects when the transport is down, so
   * the caller can report it.
   */
  publish(snapshot: SignedSnapshot, options?: PublishOptions): Promise<boolean | void>;
  /**
   * Keeps a delta for catch-up, moves the head to its version and announces it with the delta inline. Refused (false)
   * unless the head is of the delta's epoch and `from` ≤ head version < `version`: deltas form one ordered chain.
   */
  publishDelta(delta: SignedDelta): Promise<boolean>;
  /** the kept deltas whose version is above `after`, in version order */
  fetchDeltas(after: number): Promise<SignedDelta[]>;
  /**
   * Stores a full snapshot for data planes that join or fall behind, without announcing it: only one of the head's
   * epoch, not above the head and above the stored one. Kept deltas it makes useless are dropped.
   */
  storeSnapshot(snapshot: SignedSnapshot): Promise<boolean>;
  /**
   * the latest stored full snapshot, or null when none was ever published; the head may be ahead of it by the kept
   * deltas (`fetchDeltas(snapshot.version)`)
   */
  fetchLatest(): Promise<SignedSnapshot | null>;
  /** `{version, hash}` of the latest stored snapshot without its payload (a cheap check), or null */
  latestAnnouncement(): Promise<SnapshotAnnouncement | null>;
  /**
   * Receives announcements. `onReconnect` fires after the transport comes back from a disconnection,
   * so the subscriber can fetch the full snapshot again.
   */
  subscribe(handlers: { onAnnouncement(a: SnapshotAnnouncement): void; onReconnect(): void }): Promise<BusSubscription>;
  /** data plane heartbeat; entries expire when a data plane stops reporting */
  reportDataPlane(report: DataPlaneReport): Promise<void>;
  /** every data plane that reported within the row lifetime, most recently seen first */
  listDataPlanes(): Promise<ListedDataPlane[]>;
  close(): Promise<void>;
}
