import { BatchQueue, type BatchHandler, type QueueLogger, type QueueSpec, type QueueStats } from './queue';
import type { QueueConfig } from './queue-schema';

/**
 * The queues of one data-plane process, shared by every plugin configuration that enqueues (Kong keeps them per
 * worker). A queue lives while it holds entries and is forgotten once drained; its counters stay for `/metrics`.
 */
export class PluginQueues {
  private readonly live = new Map<string, BatchQueue<unknown>>();
  private readonly finished = new Map<string, QueueStats>();
  /** queue settings as part of a queue's key, once per settings object */
  private readonly settingsKeys = new WeakMap<QueueConfig, string>();
  /** queue keys per spec object */
  private readonly specKeys = new WeakMap<QueueSpec<unknown>, string>();
  private closed = false;

  constructor(private readonly log: QueueLogger) {}

  /**
   * queues `entry` on the queue `spec` names, creating it on first use; false when the entry was refused. `count`:
   * how many of Kong's entries it stands for (`BatchQueue.add`).
   */
  enqueue<T>(spec: QueueSpec<T>, entry: T, count = 1): boolean {
    if (this.closed) return false;
    return this.queueFor(spec).add(entry, spec.handler as BatchHandler<unknown>, count);
  }

  /** queues `entries` in order on the queue `spec` names (one lookup for all); how many were taken */
  enqueueAll<T>(spec: QueueSpec<T>, entries: readonly T[]): number {
    if (this.closed) return 0;
    const queue = this.queueFor(spec);
    const handler = spec.handler as BatchHandler<unknown>;
    let taken = 0;
    for (let i = 0; i < entries.length; i++) if (queue.add(entries[i], handler)) taken++;
    return taken;
  }

  /** a queue's key: its name and settings, made once per spec object (a plugin keeps one per configuration) */
  private keyOf(spec: QueueSpec<unknown>): string {
    let key = this.specKeys.get(spec);
    if (key !== undefined) return key;
    let settings = this.settingsKeys.get(spec.config);
    if (settings === undefined) this.settingsKeys.set(spec.config, (settings = JSON.stringify(spec.config)));
    key = `${spec.name}\u0000${settings}`;
    this.specKeys.set(spec, key);
    return key;
  }

  private queueFor<T>(spec: QueueSpec<T>): BatchQueue<unknown> {
    const key = this.keyOf(spec as QueueSpec<unknown>);
    const live = this.live.get(key);
    if (live !== undefined) return live;
    // entries of one key always come with a handler of the same entry type: the key names what the handler does
    const handler = spec.handler as BatchHandler<unknown>;
    const created: BatchQueue<unknown> = new BatchQueue<unknown>({ ...spec, handler, sizeOf: spec.sizeOf as ((e: unknown) => number) | undefined }, this.log, () => {
      if (this.live.get(key) === created) this.live.delete(key);
      const total = this.finished.get(key) ?? { ...created.stats, entries: 0, dropped: 0, failed: 0, sent: 0 };
      this.finished.set(key, { ...total, dropped: total.dropped + created.stats.dropped, failed: total.failed + created.stats.failed, sent: total.sent + created.stats.sent });
    });
    this.live.set(key, created);
    return created;
  }

  /** counters per queue (live and drained ones), for `/metrics` */
  stats(): QueueStats[] {
    const out = new Map<string, QueueStats>();
    for (const [key, s] of this.finished) out.set(key, { ...s });
    for (const [key, q] of this.live) {
      const before = out.get(key);
      const s = q.stats;
      out.set(key, before ? { ...s, dropped: s.dropped + before.dropped, failed: s.failed + before.failed, sent: s.sent + before.sent } : { ...s });
    }
    return [...out.values()];
  }

  /**
   * hands what is waiting to the handlers once (no more retries) and refuses new entries; resolves when that is done,
   * or after `graceMs` when a handler is still busy (its entries are then lost with the process)
   */
  async close(graceMs = 2000): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all([...this.live.values()].map((q) => q.close())), grace]);
    clearTimeout(timer);
  }
}
