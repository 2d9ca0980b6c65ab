import type { ConfigState, SignedSnapshot } from '@gatehouse/core';
import { signSnapshotAsync, type ConfigBus, type SnapshotKeys } from '@gatehouse/sync';
import type { PublisherLogger } from './publication-record';

export interface SnapshotStoreScheduleOptions {
  bus: ConfigBus;
  keys: SnapshotKeys;
  log: PublisherLogger;
  /** ms without a delta after which the full snapshot is stored (default 1000) */
  idleMs?: number;
  /** after this many deltas the full snapshot is stored even while writes go on (default 10000) */
  everyDeltas?: number;
  /** the configuration as published, kept current by deltas */
  state: () => ConfigState | null;
  /** told of each snapshot stored */
  onStored: (signed: SignedSnapshot) => void;
}

/**
 * The full snapshot for joining data planes is stored when writes pause (or every so many deltas), from the
 * configuration kept in memory: never rebuilt from the database per write.
 */
export class SnapshotStoreSchedule {
  private timer: NodeJS.Timeout | null = null;
  private storing: Promise<void> | null = null;
  private deltasSinceStore = 0;
  private stopped = false;

  constructor(private readonly opts: SnapshotStoreScheduleOptions) {}

  /** a full snapshot was published: nothing waits to be stored */
  fullPublished(): void {
    this.deltasSinceStore = 0;
  }

  /** a delta was published: the full snapshot is stored once writes pause */
  deltaPublished(): void {
    this.deltasSinceStore++;
    this.schedule();
  }

  /** stores nothing more; the returned promise settles when a store under way is done */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    return this.storing?.catch(() => {}) ?? Promise.resolve();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = this.deltasSinceStore >= (this.opts.everyDeltas ?? 10_000) ? 0 : (this.opts.idleMs ?? 1000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.storing ??= this.store().finally(() => (this.storing = null));
    }, delay);
    this.timer.unref();
  }

  private async store(): Promise<void> {
    const state = this.opts.state();
    if (!state || this.stopped || this.deltasSinceStore === 0) return;
    const count = this.deltasSinceStore;
    const signed = await signSnapshotAsync(state.toSnapshot(), this.opts.keys);
    try {
      await this.opts.bus.storeSnapshot(signed);
      this.opts.onStored(signed);
      this.deltasSinceStore = Math.max(0, this.deltasSinceStore - count);
    } catch (err) {
      this.opts.log.warn('full snapshot not stored: the bus is unreachable; trying again later', { error: err instanceof Error ? err.message : String(err) });
      this.schedule();
    }
  }
}
