import { Fifo } from './fifo';
import type { QueueConfig } from './queue-schema';

/** Processes one batch; resolves when it was accepted, rejects (or throws) to have it retried. */
export type BatchHandler<T> = (batch: T[]) => Promise<void>;

/** What a plugin hands to `PluginQueues.enqueue` with each entry. */
export interface QueueSpec<T> {
  /**
   * Kong's queue name: entries enqueued under the same name and the same queue settings share one queue (and so one
   * batch stream), whichever plugin configuration enqueued them. http-log names its queues after the fields that make
   * two configurations send to the same place; most plugins use their plugin id.
   */
  name: string;
  /** identifies the plugin configuration in log lines: `<plugin> plugin <id>` */
  logTag: string;
  /** the plugin configuration counted for this queue in `/metrics` (the one that created it) */
  owner: string;
  config: QueueConfig;
  /** the latest handler given for a queue is the one that runs, as Kong uses the latest handler configuration */
  handler: BatchHandler<T>;
  /** an entry's size for `max_bytes` (default: the UTF-8 length of a string, of its JSON text otherwise) */
  sizeOf?: (entry: T) => number;
}

export interface QueueLogger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
}

export interface QueueStats {
  owner: string;
  name: string;
  /** entries waiting, the batch being handled included */
  entries: number;
  /** entries dropped to make room (max_entries, max_bytes) or refused as larger than max_bytes */
  dropped: number;
  /** entries given up after max_retry_time */
  failed: number;
  /** entries the handler accepted */
  sent: number;
}

const CAPACITY_WARNING_THRESHOLD = 0.8;
/** a batch whose coalescing budget has less than this left is sent at once */
const COALESCE_MIN_SECONDS = 0.05;

/** waits up to `seconds`, or less when one of `wakers` is called */
function sleep(seconds: number, wakers: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      wakers.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, seconds * 1000);
    timer.unref();
    wakers.add(wake);
  });
}

function wakeAll(wakers: Set<() => void>): void {
  for (const wake of [...wakers]) wake();
}

function defaultSize(entry: unknown): number {
  return Buffer.byteLength(typeof entry === 'string' ? entry : (JSON.stringify(entry) ?? ''));
}

/**
 * One queue, as Kong's `kong.tools.queue`: entries are handed to the handler in batches of up to `max_batch_size`,
 * a batch waiting up to `max_coalescing_delay` seconds after its first entry for more; one batch at a time
 * (`concurrency_limit` 1), or each entry at once on its own (-1). A failed batch is retried after
 * `initial_retry_delay` seconds, the delay doubling up to `max_retry_delay`, until `max_retry_time` seconds have
 * passed; then it is dropped with an error. When `max_entries` (or `max_bytes`) is reached the oldest entries are
 * dropped to make room, with an error line, until processing succeeds again.
 */
export class BatchQueue<T> {
  private readonly entries = new Fifo<T>();
  private readonly sizes = new Fifo<number>();
  /** per entry, how many of Kong's entries it stands for (see `add`) */
  private readonly counts = new Fifo<number>();
  private bytes = 0;
  /** Kong's entries waiting: the sum of `counts` */
  private counted = 0;
  private inFlight = 0;
  private running = false;
  private closing = false;
  private warned = false;
  private droppingOld = false;
  /** wakes a batch waiting for more entries (a full batch, closing) */
  private readonly coalescing = new Set<() => void>();
  /** wakes the waits between retries (closing) */
  private readonly retrying = new Set<() => void>();
  readonly stats: QueueStats;

  constructor(
    private readonly spec: QueueSpec<T>,
    private readonly log: QueueLogger,
    /** called when the queue has nothing left (Kong then forgets it; the next entry makes a new one) */
    private readonly onDrained: () => void = () => {},
  ) {
    this.spec = { ...spec };
    this.stats = { owner: spec.owner, name: spec.name, entries: 0, dropped: 0, failed: 0, sent: 0 };
  }

  get config(): QueueConfig {
    return this.spec.config;
  }

  /**
   * queues an entry; false when it was refused (larger than `max_bytes`, or the queue is closed). An entry may stand
   * for `count` of Kong's entries (a request's spans, encoded together): `max_entries`, `max_batch_size` and the
   * counters count those, and it is dropped, batched and sent whole.
   */
  add(entry: T, handler: BatchHandler<T> = this.spec.handler, count = 1): boolean {
    this.spec.handler = handler;
    if (this.closing) return false;
    if (this.config.concurrency_limit === -1) {
      this.inFlight += count;
      this.updateCount();
      setImmediate(() => void this.handle([entry], count).finally(() => this.finishUnqueued(count)));
      return true;
    }
    if (!this.makeRoom(entry, count)) return false;
    this.entries.push(entry);
    this.counts.push(count);
    this.counted += count;
    this.updateCount();
    if (!this.running) void this.run();
    else if (this.counted >= this.config.max_batch_size) wakeAll(this.coalescing);
    return true;
  }

  /** stops retrying and coalescing, hands what is waiting to the handler once, and resolves when that is done */
  async close(): Promise<void> {
    this.closing = true;
    wakeAll(this.coalescing);
    wakeAll(this.retrying);
    while (this.running || this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private say(level: keyof QueueLogger, message: string): void {
    this.log[level](`[${this.spec.logTag}] queue ${this.spec.name}: ${message}`);
  }

  private makeRoom(entry: T, count: number): boolean {
    const { max_entries: maxEntries, max_bytes: maxBytes } = this.config;
    const waiting = this.counted;
    if (waiting >= maxEntries * CAPACITY_WARNING_THRESHOLD) {
      if (!this.warned) this.say('warn', `queue at ${CAPACITY_WARNING_THRESHOLD * 100}% capacity`);
      this.warned = true;
    } else this.warned = false;
    if (waiting + count > maxEntries && this.entries.length > 0) {
      if (!this.droppingOld) this.say('error', 'queue full, dropping old entries until processing is successful again');
      while (this.counted + count > maxEntries && this.entries.length > 0) this.dropOldest();
    }
    const size = maxBytes === null ? 0 : (this.spec.sizeOf ?? defaultSize)(entry);
    if (maxBytes !== null && size > maxBytes) {
      this.stats.dropped++;
      this.say('error', `string to be queued is longer (${size} bytes) than the queue's max_bytes (${maxBytes} bytes)`);
      return false;
    }
    if (maxBytes !== null && this.bytes + size > maxBytes) {
      let dropped = 0;
      while (this.bytes + size > maxBytes && this.entries.length > 0) dropped += this.dropOldest();
      this.say('error', `byte capacity exceeded, ${dropped} queue entries were dropped`);
    }
    this.sizes.push(size);
    this.bytes += size;
    return true;
  }

  /** drops the oldest entry; how many of Kong's entries it stood for */
  private dropOldest(): number {
    this.entries.shift();
    this.bytes -= this.sizes.shift()!;
    const count = this.counts.shift()!;
    this.counted -= count;
    this.stats.dropped += count;
    this.droppingOld = true;
    return count;
  }

  /** takes the oldest entries standing for at most `limit` of Kong's entries (at least one entry); they and their count */
  private takeBatch(limit: number): { batch: T[]; count: number } {
    let entries = 0;
    let count = 0;
    for (;;) {
      const next = this.counts.at(entries);
      if (next === undefined || (entries > 0 && count + next > limit)) break;
      count += next;
      entries++;
    }
    for (const size of this.sizes.take(entries)) this.bytes -= size;
    this.counts.take(entries);
    this.counted -= count;
    return { batch: this.entries.take(entries), count };
  }

  private updateCount(): void {
    this.stats.entries = this.counted + this.inFlight;
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.entries.length > 0) {
      const started = Date.now();
      for (;;) {
        const left = this.config.max_coalescing_delay - (Date.now() - started) / 1000;
        if (this.closing || this.counted >= this.config.max_batch_size || left < COALESCE_MIN_SECONDS) break;
        await sleep(left, this.coalescing);
      }
      const { batch, count } = this.takeBatch(this.config.max_batch_size);
      this.inFlight = count;
      if (this.droppingOld) {
        this.say('info', 'queue resumed processing');
        this.droppingOld = false;
      }
      await this.handle(batch, count);
      this.inFlight = 0;
      this.updateCount();
    }
    this.running = false;
    this.onDrained();
  }

  private finishUnqueued(count: number): void {
    this.inFlight -= count;
    this.updateCount();
    if (this.inFlight === 0 && this.entries.length === 0) this.onDrained();
  }

  /**
   * hands a batch (standing for `count` of Kong's entries) to the handler, retrying with exponential backoff until
   * max_retry_time has passed
   */
  private async handle(batch: T[], count: number): Promise<void> {
    const started = Date.now();
    for (let retry = 0; ; retry++) {
      try {
        await this.spec.handler(batch);
        this.stats.sent += count;
        return;
      } catch (err) {
        this.say('warn', `handler could not process entries: ${err instanceof Error ? err.message : String(err)}`);
        if (this.closing || (Date.now() - started) / 1000 > this.config.max_retry_time) {
          this.stats.failed += count;
          this.say('error', `could not send entries due to max_retry_time exceeded. ${count} queue entries were lost`);
          return;
        }
        await sleep(Math.min(this.config.max_retry_delay, 2 ** retry * this.config.initial_retry_delay), this.retrying);
      }
    }
  }
}
