import type { PluginRuntime } from '../../contract';
import type { BatchHandler } from '../queue';
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
  private readonly handlers = new WeakMap<object, BatchHandler<T>>();

  constructor(
    private readonly plugin: string,
    private readonly suffix: string,
    private readonly sinkKey: (config: Config) => string,
    private readonly sinkFor: (config: Config, runtime: PluginRuntime) => BatchSink<T>,
  ) {}

  /** queues one entry (a span) for the configuration's receiver */
  add(runtime: PluginRuntime, pluginId: string | undefined, config: Config, entry: T): void {
    const id = pluginId ?? this.plugin;
    queuesFor(runtime).enqueue({ name: `${id}${this.suffix}`, logTag: `${this.plugin} plugin ${id}`, owner: id, config: config.queue, handler: this.handlerFor(config, runtime) }, entry);
  }

  private handlerFor(config: Config, runtime: PluginRuntime): BatchHandler<T> {
    let handler = this.handlers.get(config);
    if (handler === undefined) {
      const key = this.sinkKey(config);
      handler = (batch) => {
        let sink = this.sinks.get(key);
        if (sink === undefined) this.sinks.set(key, (sink = this.sinkFor(config, runtime)));
        return sink.send(batch);
      };
      this.handlers.set(config, handler);
    }
    return handler;
  }

  /** closes the receivers' connections (shutdown, tests); the queues are closed by their owner */
  async close(): Promise<void> {
    const all = [...this.sinks.values()];
    this.sinks.clear();
    await Promise.all(all.map((s) => s.close().catch(() => {})));
  }
}
