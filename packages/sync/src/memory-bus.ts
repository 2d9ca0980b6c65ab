import type { SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
import {
  DEFAULT_DATA_PLANE_TTL_SECONDS,
  type BusSubscription,
  type ConfigBus,
  type DataPlaneReport,
  type ListedDataPlane,
  type PublishOptions,
} from './bus';
import { announcementOf } from './announcement';
import { succession } from './snapshot-order';

type Handlers = Parameters<ConfigBus['subscribe']>[0];

export interface MemoryBusOptions {
  /** lifetime of a data plane's row after its last report (default 14 days) */
  dataPlaneTtlSeconds?: number;
  /** clock in epoch milliseconds (tests move it forward) */
  now?: () => number;
}

/**
 * The in-process bus of embedded mode, with Redis's semantics: one latest snapshot, announcements delivered
 * asynchronously (never inside `publish`), data-plane rows that expire. Values are copied in and out, so no
 * caller shares an object with another.
 */
export class MemoryBus implements ConfigBus {
  private latest: SignedSnapshot | null = null;
  private readonly subscribers = new Set<Handlers>();
  private readonly reports = new Map<string, DataPlaneReport>();
  private readonly ttlSeconds: number;
  private readonly now: () => number;
  private closed = false;

  constructor(options: MemoryBusOptions = {}) {
    this.ttlSeconds = options.dataPlaneTtlSeconds ?? DEFAULT_DATA_PLANE_TTL_SECONDS;
    this.now = options.now ?? Date.now;
  }

  async publish(snapshot: SignedSnapshot, options: PublishOptions = {}): Promise<boolean> {
    this.assertOpen();
    if (this.latest && !options.replace) {
      const order = succession(snapshot, this.latest);
      if (order === 'older-epoch' || order === 'older-version') return false;
    }
    this.latest = { ...snapshot };
    const announcement: SnapshotAnnouncement = announcementOf(snapshot);
    for (const handlers of this.subscribers) this.deliver(() => handlers.onAnnouncement({ ...announcement }));
    return true;
  }

  async fetchLatest(): Promise<SignedSnapshot | null> {
    this.assertOpen();
    return this.latest ? { ...this.latest } : null;
  }

  async latestAnnouncement(): Promise<SnapshotAnnouncement | null> {
    this.assertOpen();
    return this.latest ? announcementOf(this.latest) : null;
  }

  async subscribe(handlers: Handlers): Promise<BusSubscription> {
    this.assertOpen();
    this.subscribers.add(handlers);
    return {
      close: async () => {
        this.subscribers.delete(handlers);
      },
    };
  }

  /** Fires every subscriber's `onReconnect`, as a transport coming back from an outage would. */
  reconnectSubscribers(): void {
    for (const handlers of this.subscribers) this.deliver(() => handlers.onReconnect());
  }

  async reportDataPlane(report: DataPlaneReport): Promise<void> {
    this.assertOpen();
    this.reports.set(report.id, { ...report });
  }

  async listDataPlanes(): Promise<ListedDataPlane[]> {
    this.assertOpen();
    const nowSeconds = Math.floor(this.now() / 1000);
    const listed: ListedDataPlane[] = [];
    for (const [id, report] of this.reports) {
      const ttl = this.ttlSeconds - (nowSeconds - report.last_seen);
      if (ttl <= 0) this.reports.delete(id);
      else listed.push({ ...report, ttl });
    }
    return listed.sort((a, b) => b.last_seen - a.last_seen || a.id.localeCompare(b.id));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
  }

  private deliver(call: () => void): void {
    setImmediate(() => {
      if (this.closed) return;
      try {
        call();
      } catch {
        // a subscriber's failure is its own; other subscribers still get the message
      }
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('config bus is closed');
  }
}
