import { createHash } from 'node:crypto';
import type { Agent } from 'undici';
import { serializeSession, type SerializedSession } from '../shared/session-serializer';
import { definePlugin, type PluginRuntime } from '../contract';
import { customFieldValues } from '../shared/custom-fields';
import { serializeExchange, type SerializedExchange } from '../shared/log-serializer';
import type { BatchHandler } from '../shared/queue';
import { perConfig } from '../shared/per-config';
import { queueConfigOf } from '../shared/queue-schema';
import { queuesFor } from '../shared/runtime-queues';
import { runtimeState } from '../shared/runtime-state';
import { httpLogAgent, postPayload } from './sender';
import { httpLogConfigSchema, type HttpLogConfig } from './schema';

/**
 * Kong names an http-log queue after the fields that decide where and how entries are sent, so configurations that
 * agree on them share one queue and one connection pool (and the latest configuration's headers are the ones sent).
 */
const queueName = perConfig((config: HttpLogConfig): string =>
  [endpointForName(config.http_endpoint), config.method, config.content_type, config.timeout, config.keepalive, config.retry_count].join(':'),
);

/** The endpoint as queue names (and so log lines) show it: a password in the URL is replaced by a digest of it. */
function endpointForName(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.password === '') return endpoint;
  url.password = `sha256-${createHash('sha256').update(url.password).digest('hex').slice(0, 16)}`;
  return url.toString();
}

/** The connection pools of one data-plane node, one per queue name, and each configuration's batch handler. */
class HttpLogSenders {
  private readonly agents = new Map<string, Agent>();
  private readonly handlers = new WeakMap<HttpLogConfig, BatchHandler<SerializedExchange | SerializedSession>>();

  handlerFor(name: string, config: HttpLogConfig): BatchHandler<SerializedExchange | SerializedSession> {
    let handler = this.handlers.get(config);
    if (handler === undefined) {
      // Kong sends a JSON array when batches may hold more than one entry, a single object otherwise
      const batched = config.queue.max_batch_size > 1;
      handler = (batch) => {
        let agent = this.agents.get(name);
        if (agent === undefined) this.agents.set(name, (agent = httpLogAgent(config)));
        return postPayload(agent, config, JSON.stringify(batched ? batch : batch[0]));
      };
      this.handlers.set(config, handler);
    }
    return handler;
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(all.map((a) => a.close().catch(() => {})));
  }
}

const senders = runtimeState(() => new HttpLogSenders());

/**
 * Kong's http-log: each finished exchange, serialised as Kong's log serializer does, goes through the shared plugin
 * queue (batching, retries, bounded size) to `http_endpoint`.
 */
export const httpLog = definePlugin<HttpLogConfig, unknown>({
  name: 'http-log',
  priority: 12,
  version: '3.9.0',
  configSchema: httpLogConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: (ctx, config, summary) => {
    const pluginId = ctx.pluginId ?? 'http-log';
    const custom = customFieldValues(ctx, config.custom_fields_by_lua, summary, 'http-log');
    enqueue(ctx.runtime, pluginId, config, serializeExchange(summary, custom));
  },
  streamLog: (ctx, config, session) => enqueue(ctx.runtime, ctx.pluginId, config, serializeSession(session)),
});

function enqueue(runtime: PluginRuntime, pluginId: string, config: HttpLogConfig, entry: SerializedExchange | SerializedSession): void {
  const name = queueName(config);
  queuesFor(runtime).enqueue({ name, logTag: `http-log plugin ${pluginId}`, owner: pluginId, config: queueConfigOf(config), handler: senders.of(runtime).handlerFor(name, config) }, entry);
}
