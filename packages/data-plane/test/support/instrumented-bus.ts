import type { SignedDelta, SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
import type { BusSubscription, ConfigBus, DataPlaneReport, ListedDataPlane, PublishOptions } from '@gatehouse/sync';

type Handlers = Parameters<ConfigBus['subscribe']>[0];

/**
 * A real bus seen through a window: counts fetches, can hold back announcements (as if they were lost), and can
 * hand an announcement or a reconnect straight to the subscribers. Everything else goes to the real bus.
 */
export class InstrumentedBus implements ConfigBus {
  fetches = 0;
  /** calls of latestAnnouncement (the periodic check) */
  headChecks = 0;
  muted = false;
  /** announcements held back while muted */
  dropped = 0;
  /** this many coming fetches fail, as they would while the transport is down */
  failNextFetches = 0;
  private readonly handlers = new Set<Handlers>();

  constructor(readonly inner: ConfigBus) {}

  publish(snapshot: SignedSnapshot, options?: PublishOptions): Promise<boolean | void> {
    return this.inner.publish(snapshot, options);
  }
  publishDelta(delta: SignedDelta): Promise<boolean> {
    return this.inner.publishDelta(delta);
  }
  fetchDeltas(after: number): Promise<SignedDelta[]> {
    return this.inner.fetchDeltas(after);
  }
  storeSnapshot(snapshot: SignedSnapshot): Promise<boolean> {
    return this.inner.storeSnapshot(snapshot);
  }
  fetchLatest(): Promise<SignedSnapshot | null> {
    this.fetches++;
    if (this.failNextFetches > 0) {
      this.failNextFetches--;
      return Promise.reject(new Error('transport down'));
    }
    return this.inner.fetchLatest();
  }
  latestAnnouncement(): Promise<SnapshotAnnouncement | null> {
    this.headChecks++;
    return this.inner.latestAnnouncement();
  }
  async subscribe(handlers: Handlers): Promise<BusSubscription> {
    this.handlers.add(handlers);
    const inner = await this.inner.subscribe({
      onAnnouncement: (a) => {
        if (this.muted) this.dropped++;
        else handlers.onAnnouncement(a);
      },
      onReconnect: () => handlers.onReconnect(),
    });
    return {
      close: async () => {
        this.handlers.delete(handlers);
        await inner.close();
      },
    };
  }
  reportDataPlane(report: DataPlaneReport): Promise<void> {
    return this.inner.reportDataPlane(report);
  }
  listDataPlanes(): Promise<ListedDataPlane[]> {
    return this.inner.listDataPlanes();
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  announce(announcement: SnapshotAnnouncement): void {
    for (const h of this.handlers) h.onAnnouncement(announcement);
  }
  reconnect(): void {
    for (const h of this.handlers) h.onReconnect();
  }
}
