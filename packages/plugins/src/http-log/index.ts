import { definePlugin, type PluginLogger } from '../contract';
import { customFieldValues } from '../shared/custom-fields';
import { serializeExchange, type SerializedExchange } from '../shared/log-serializer';
import { BatchQueue, type QueueStats } from './queue';
import { HttpLogSender } from './sender';
import { httpLogConfigSchema, type HttpLogConfig } from './schema';

interface QueueEntry {
  queue: BatchQueue<SerializedExchange>;
  sender: HttpLogSender;
  pluginId: string;
}

/**
 * One queue per configuration object: a new snapshot brings new config objects and so new queues; the old ones
 * finish sending what they hold, then close.
 */
const queues = new Map<string, QueueEntry>();
const byConfig = new WeakMap<object, QueueEntry>();

const consoleLog: PluginLogger = {
  error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`),
  warn: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...detail })}\n`),
};

function queueFor(pluginId: string, config: HttpLogConfig, log: PluginLogger): QueueEntry {
  let entry = byConfig.get(config);
  if (entry !== undefined) return entry;
  const key = `${pluginId}|${JSON.stringify(config)}`;
  entry = queues.get(key);
  if (entry === undefined) {
    const sender = new HttpLogSender(config);
    // Kong sends a JSON array when batches may hold more than one entry, a single object otherwise
    const batched = config.queue.max_batch_size > 1;
    const queue = new BatchQueue<SerializedExchange>(
      `http-log ${pluginId}`,
      config.queue,
      (batch) => sender.send(JSON.stringify(batched ? batch : batch[0])),
      { warn: (m, d) => (log.warn ?? log.error)(`http-log: ${m}`, d), error: (m, d) => log.error(`http-log: ${m}`, d) },
      (e) => JSON.stringify(e).length,
    );
    entry = { queue, sender, pluginId };
    for (const [otherKey, other] of queues) {
      if (other.pluginId !== pluginId) continue;
      queues.delete(otherKey);
      void other.queue.idle().then(() => other.sender.close());
    }
    queues.set(key, entry);
  }
  byConfig.set(config, entry);
  return entry;
}

/** Queue counters of every http-log configuration in this process, for `/metrics`. */
export function httpLogQueueStats(): Array<{ pluginId: string } & QueueStats> {
  return [...queues.values()].map((e) => ({ pluginId: e.pluginId, ...e.queue.stats }));
}

/** Stops every queue and closes its connections (shutdown, tests); entries still waiting are dropped. */
export async function closeHttpLogQueues(): Promise<void> {
  const all = [...queues.values()];
  queues.clear();
  for (const entry of all) entry.queue.stop();
  await Promise.all(all.map((e) => e.sender.close().catch(() => {})));
}

/**
 * Kong's http-log: each finished exchange, serialised as Kong's log serializer does, is queued and sent to
 * `http_endpoint` in batches (see BatchQueue for batching, retries and the bounded queue).
 */
export const httpLog = definePlugin<HttpLogConfig, unknown>({
  name: 'http-log',
  priority: 12,
  version: '3.9.0',
  configSchema: httpLogConfigSchema,
  auth: false,
  noConsumer: false,
  log: (ctx, config, summary) => {
    const custom = customFieldValues(ctx, config.custom_fields_by_lua, summary, 'http-log');
    queueFor(ctx.pluginId ?? 'http-log', config, ctx.runtime.log ?? consoleLog).queue.add(serializeExchange(summary, custom));
  },
});
