import type { PluginRuntime } from '../../contract';
import type { BatchHandler, QueueSpec } from '../queue';
import type { QueueConfig } from '../queue-schema';
import { queuesFor } from '../runtime-queues';

/** Where a tracing plugin's batches go; `close` releases its connections. */
export interface BatchSink<T> {
  send(batch: T[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The way tracing plugins send spans: through the node's shared plugin queues (Kong's `queue` fields), one queue per
 * plugin configuration as Kong names it (`<plugin id><suffix>`), each batch handed to the configuration's sink.
 */
export class SpanExport<Config extends { queue: QueueConfig }, T> {
  private readonly sinks = new Map<string, BatchSink<T>>();
  private readonly specs = new WeakMap<object, QueueSpec<T>>();

  constructor(
    private readonly plugin: string,
    private readonly suffix: string,
    private readonly sinkKey: (config: Config) => string,
    private readonly sinkFor: (config: Config, runtime: PluginRuntime) => BatchSink<T>,
    /** an entry's size for `max_bytes` (default: the queue's, the length of its JSON text) */
    private readonly sizeOf?: (entry: T) => number,
  ) {}

  /** queues entries (spans) for the configuration's receiver; `queue` is the configuration's queue settings in force */
  add(runtime: PluginRuntime, pluginId: string | undefined, config: Config, queue: QueueConfig, entries: readonly T[]): void {
    queuesFor(runtime).enqueueAll(this.specOf(runtime, pluginId, config, queue), entries);
  }

  /**
   * queues one entry that stands for `count` spans (a request's spans encoded together): the queue counts, batches
   * and drops it as that many spans, kept and sent whole
   */
  addCounted(runtime: PluginRuntime, pluginId: string | undefined, config: Config, queue: QueueConfig, entry: T, count: number): void {
    queuesFor(runtime).enqueue(this.specOf(runtime, pluginId, config, queue), entry, count);
  }

  /** the queue's description, made once per configuration object (a snapshot's), not per entry */
  private specOf(runtime: PluginRuntime, pluginId: string | undefined, config: Config, queue: QueueConfig): QueueSpec<T> {
    let spec = this.specs.get(config);
    if (spec === undefined) {
      const id = pluginId ?? this.plugin;
      spec = { name: `${id}${this.suffix}`, logTag: `${this.plugin} plugin ${id}`, owner: id, config: queue, handler: this.handlerFor(config, runtime), sizeOf: this.sizeOf };
      this.specs.set(config, spec);
    }
    return spec;
  }

  private handlerFor(config: Config, runtime: PluginRuntime): BatchHandler<T> {
    const key = this.sinkKey(config);
    return (batch) => {
      let sink = this.sinks.get(key);
      if (sink === undefined) this.sinks.set(key, (sink = this.sinkFor(config, runtime)));
      return sink.send(batch);
    };
  }

  /** closes the receivers' connections (shutdown, tests); the queues are closed by their owner */
  async close(): Promise<void> {
    const all = [...this.sinks.values()];
    this.sinks.clear();
    await Promise.all(all.map((s) => s.close().catch(() => {})));
  }
}
