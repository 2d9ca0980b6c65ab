import type { QueueConfig } from './schema';

/** Sends one batch; resolves when the receiver accepted it, rejects to have it retried. */
export type BatchSender<T> = (batch: T[]) => Promise<void>;

export interface QueueStats {
  /** entries waiting, batches in flight included */
  entries: number;
  /** entries refused because the queue was full (max_entries, max_bytes) */
  dropped: number;
  /** entries given up after max_retry_time */
  failed: number;
  /** entries the receiver accepted */
  sent: number;
}

export interface QueueLogger {
  warn(message: string, detail?: Record<string, unknown>): void;
  error(message: string, detail?: Record<string, unknown>): void;
}

/**
 * Kong's plugin queue: entries are batched (up to `max_batch_size`, or whatever arrived within `max_coalescing_delay`
 * seconds of the batch's first entry), sent one batch at a time, retried on failure with exponential backoff from
 * `initial_retry_delay` up to `max_retry_delay` seconds until `max_retry_time` seconds have passed, then dropped.
 * At most `max_entries` wait (and `max_bytes` of them when set); past that new entries are dropped and counted.
 */
export class BatchQueue<T> {
  private readonly items: T[] = [];
  private bytes = 0;
  private readonly sizes: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  readonly stats: QueueStats = { entries: 0, dropped: 0, failed: 0, sent: 0 };

  constructor(
    readonly name: string,
    private readonly config: QueueConfig,
    private readonly send: BatchSender<T>,
    private readonly log: QueueLogger,
    private readonly sizeOf: (entry: T) => number = () => 0,
  ) {}

  add(entry: T): boolean {
    if (this.stopped) return false;
    const size = this.config.max_bytes === null ? 0 : this.sizeOf(entry);
    if (this.items.length >= this.config.max_entries || (this.config.max_bytes !== null && this.bytes + size > this.config.max_bytes)) {
      this.stats.dropped++;
      if (this.stats.dropped === 1 || this.stats.dropped % 1000 === 0) {
        this.log.warn('queue full, dropping entry', { queue: this.name, dropped: this.stats.dropped, max_entries: this.config.max_entries });
      }
      return false;
    }
    this.items.push(entry);
    this.sizes.push(size);
    this.bytes += size;
    this.stats.entries = this.items.length;
    this.schedule();
    return true;
  }

  /** resolves once nothing waits and nothing is in flight */
  idle(): Promise<void> {
    if (this.items.length === 0 && !this.sending) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** stops timers and retries; entries still waiting are dropped */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.sending || this.stopped) return;
    if (this.items.length >= this.config.max_batch_size || this.config.max_coalescing_delay === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      void this.drain();
      return;
    }
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.drain();
      }, this.config.max_coalescing_delay * 1000);
      this.timer.unref();
    }
  }

  private async drain(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    while (this.items.length > 0 && !this.stopped) {
      const count = Math.min(this.items.length, this.config.max_batch_size);
      const batch = this.items.slice(0, count);
      await this.deliver(batch);
      this.items.splice(0, count);
      for (const size of this.sizes.splice(0, count)) this.bytes -= size;
      this.stats.entries = this.items.length;
      // a partial batch waits for its coalescing delay, as new entries would
      if (this.items.length > 0 && this.items.length < this.config.max_batch_size && this.config.max_coalescing_delay > 0) break;
    }
    this.sending = false;
    if (this.items.length > 0) this.schedule();
    else {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async deliver(batch: T[]): Promise<void> {
    const started = Date.now();
    let delay = this.config.initial_retry_delay;
    for (;;) {
      try {
        await this.send(batch);
        this.stats.sent += batch.length;
        return;
      } catch (err) {
        const elapsed = (Date.now() - started) / 1000;
        if (this.stopped || elapsed + delay > this.config.max_retry_time) {
          this.stats.failed += batch.length;
          this.log.error('could not send entries, giving up after retries', { queue: this.name, entries: batch.length, error: (err as Error).message });
          return;
        }
        this.log.warn('could not send entries, retrying', { queue: this.name, entries: batch.length, retry_in_s: delay, error: (err as Error).message });
        await new Promise<void>((resolve) => setTimeout(resolve, delay * 1000).unref());
        delay = Math.min(delay * 2, this.config.max_retry_delay);
      }
    }
  }
}
