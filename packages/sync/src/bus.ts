import type { SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';

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
}

export interface BusSubscription {
  close(): Promise<void>;
}

/**
 * The snapshot transport between the control plane and the data planes.
 * Implementations: Redis (cluster) and in-memory (embedded mode); same semantics.
 */
export interface ConfigBus {
  /** stores the full signed snapshot as the latest, then announces `{version, hash}` */
  publish(snapshot: SignedSnapshot): Promise<void>;
  /** the latest stored snapshot, or null when none was ever published */
  fetchLatest(): Promise<SignedSnapshot | null>;
  /**
   * Receives announcements. `onReconnect` fires after the transport comes back from a disconnection,
   * so the subscriber can fetch the full snapshot again.
   */
  subscribe(handlers: { onAnnouncement(a: SnapshotAnnouncement): void; onReconnect(): void }): Promise<BusSubscription>;
  /** data plane heartbeat; entries expire when a data plane stops reporting */
  reportDataPlane(report: DataPlaneReport): Promise<void>;
  listDataPlanes(): Promise<DataPlaneReport[]>;
  close(): Promise<void>;
}
