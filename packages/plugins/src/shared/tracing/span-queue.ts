import type { PluginLogger } from '../../contract';
import { BatchQueue } from '../../http-log/queue';
import type { QueueConfig } from '../../http-log/schema';

/** Where a tracing plugin's batches go; `close` releases its connections. */
export interface BatchSink<T> {
  send(batch: T[]): Promise<void>;
  close(): Promise<void>;
}

interface Entry<T> {
  queue: BatchQueue<T>;
  sink: BatchSink<T>;
  pluginId: string;
}

const consoleLog: PluginLogger = {
  error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`),
  warn: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...detail })}\n`),
};

/**
 * One batching queue (Kong's `queue` fields) per plugin configuration: a new snapshot brings new config objects and so
 * new queues; the old ones send what they hold, then close. This is the one place tracing plugins get a queue from.
 */
export class SpanQueues<Config extends { queue: QueueConfig }, T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly byConfig = new WeakMap<object, Entry<T>>();

  constructor(
    private readonly label: string,
    private readonly sinkFor: (config: Config) => BatchSink<T>,
  ) {}

  /** queues one entry for the configuration's receiver */
  add(pluginId: string, config: Config, entry: T, log: PluginLogger | undefined): void {
    this.queueFor(pluginId, config, log ?? consoleLog).queue.add(entry);
  }

  private queueFor(pluginId: string, config: Config, log: PluginLogger): Entry<T> {
    let entry = this.byConfig.get(config);
    if (entry !== undefined) return entry;
    const key = `${pluginId}|${JSON.stringify(config)}`;
    entry = this.entries.get(key);
    if (entry === undefined) {
      const sink = this.sinkFor(config);
      const warn = (m: string, d?: Record<string, unknown>) => (log.warn ?? log.error)(`${this.label}: ${m}`, d);
      const queue = new BatchQueue<T>(`${this.label} ${pluginId}`, config.queue, (batch) => sink.send(batch), { warn, error: (m, d) => log.error(`${this.label}: ${m}`, d) });
      entry = { queue, sink, pluginId };
      for (const [otherKey, other] of this.entries) {
        if (other.pluginId !== pluginId) continue;
        this.entries.delete(otherKey);
        void other.queue.idle().then(() => other.sink.close());
      }
      this.entries.set(key, entry);
    }
    this.byConfig.set(config, entry);
    return entry;
  }

  /** resolves once every queue has sent what it holds */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.queue.idle()));
  }

  /** stops every queue and closes its connections; entries still waiting are dropped */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const entry of all) entry.queue.stop();
    await Promise.all(all.map((e) => e.sink.close().catch(() => {})));
  }
}
