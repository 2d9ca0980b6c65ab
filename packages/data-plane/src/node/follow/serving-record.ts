import { EMPTY_CONFIG_HASH } from '@gatehouse/core';
import type { ConfigPosition, DataPlaneIdentity, DataPlaneReport } from '@gatehouse/sync';
import type { DataPlaneSyncStatus, SnapshotSource } from './data-plane-sync-options';
import type { Serving } from './ordering';

/**
 * What a data plane serves, as its sync knows it: the version and hash the node reports (the node's own word wins),
 * the epoch, where the config came from, and the last fetch, apply and failure (`sync` in the status endpoints).
 */
export class ServingRecord {
  private readonly state: DataPlaneSyncStatus = {
    config_version: null,
    config_hash: null,
    config_epoch: null,
    source: null,
    last_applied_at: null,
    last_fetched_at: null,
    last_error: null,
  };

  constructor(
    private readonly currentVersion: () => number | null,
    private readonly currentHash: (() => string | null) | undefined,
  ) {}

  get epoch(): string | null {
    return this.state.config_epoch;
  }

  /** a config was loaded or a delta applied */
  applied(config: { version: number; hash: string; epoch?: string | null }, source: SnapshotSource): void {
    this.state.config_version = config.version;
    this.state.config_hash = config.hash;
    this.state.config_epoch = config.epoch ?? null;
    this.state.source = source;
    this.state.last_applied_at = Date.now();
    this.state.last_error = null;
  }

  relabelled(version: number): void {
    this.state.config_version = version;
  }

  fetched(): void {
    this.state.last_fetched_at = Date.now();
  }

  failed(error: string): void {
    this.state.last_error = error;
  }

  status(): DataPlaneSyncStatus {
    return { ...this.state, config_version: this.version(), config_hash: this.hash() };
  }

  /** What the heartbeat reports. */
  report(identity: DataPlaneIdentity): DataPlaneReport {
    const version = this.version();
    return {
      ...identity,
      config_version: version ?? 0,
      config_hash: this.hash() ?? EMPTY_CONFIG_HASH,
      last_seen: Math.floor(Date.now() / 1000),
      sync_status: version === null ? 'unknown' : 'normal',
    };
  }

  serving(): Serving {
    return { position: this.position(), hash: this.hash() };
  }

  position(): ConfigPosition | null {
    const version = this.version();
    return version === null ? null : { version, epoch: this.state.config_epoch };
  }

  version(): number | null {
    const version = this.currentVersion();
    return version === null || version === undefined || version < 0 ? null : version;
  }

  hash(): string | null {
    return this.currentHash ? this.currentHash() : this.state.config_hash;
  }
}
