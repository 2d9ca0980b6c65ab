import type { SignedDelta, SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
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
import { isSealed } from './signing';

type Handlers = Parameters<ConfigBus['subscribe']>[0];

/** deltas kept beyond the stored snapshot at most; a data plane further behind loads the snapshot */
export const MAX_KEPT_DELTAS = 50_000;

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
  /** the head: the latest version, published as a snapshot or as a delta */
  private head: SnapshotAnnouncement | null = null;
  /** deltas kept for catch-up, in version order */
  private deltas: SignedDelta[] = [];
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
    if (this.head && !options.replace) {
      const order = succession(snapshot, this.head);
      if (order === 'older-epoch' || order === 'older-version') return false;
      // the same snapshot is the head already (another control plane published it): announced once
      if (order === 'same' && this.head.hash === snapshot.hash && (!isSealed(snapshot) || (this.latest !== null && isSealed(this.latest)))) return true;
    }
    this.latest = { ...snapshot };
    this.deltas = [];
    const announcement: SnapshotAnnouncement = announcementOf(snapshot);
    this.head = { ...announcement };
    for (const handlers of this.subscribers) this.deliver(() => handlers.onAnnouncement({ ...announcement }));
    return true;
  }

  async publishDelta(delta: SignedDelta): Promise<boolean> {
    this.assertOpen();
    const head = this.head;
    if (!head || (head.epoch ?? '') !== (delta.epoch ?? '') || head.version < delta.from || head.version >= delta.version) return false;
    this.deltas.push({ ...delta });
    if (this.deltas.length > MAX_KEPT_DELTAS) this.deltas.splice(0, this.deltas.length - MAX_KEPT_DELTAS);
    const announcement = announcementOf(delta);
    this.head = { ...announcement };
    for (const handlers of this.subscribers) this.deliver(() => handlers.onAnnouncement({ ...announcement, delta: { ...delta } }));
    return true;
  }

  async fetchDeltas(after: number): Promise<SignedDelta[]> {
    this.assertOpen();
    return this.deltas.filter((d) => d.version > after).map((d) => ({ ...d }));
  }

  async storeSnapshot(snapshot: SignedSnapshot): Promise<boolean> {
    this.assertOpen();
    const head = this.head;
    if (!head || (head.epoch ?? '') !== (snapshot.epoch ?? '') || snapshot.version > head.version) return false;
    if (this.latest && (this.latest.epoch ?? '') === (snapshot.epoch ?? '') && this.latest.version >= snapshot.version) return false;
    this.latest = { ...snapshot };
    this.deltas = this.deltas.filter((d) => d.version > snapshot.version);
    return true;
  }

  async fetchLatest(): Promise<SignedSnapshot | null> {
    this.assertOpen();
    return this.latest ? { ...this.latest } : null;
  }

  async latestAnnouncement(): Promise<SnapshotAnnouncement | null> {
    this.assertOpen();
    return this.head ? { ...this.head } : null;
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
