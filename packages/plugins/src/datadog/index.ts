import { definePlugin } from '../contract';
import { logEntry } from '../shared/log-entry';
import type { SerializedExchange } from '../shared/log-serializer';
import { queueConfigOf } from '../shared/queue-schema';
import { queuesFor } from '../shared/runtime-queues';
import { runtimeState } from '../shared/runtime-state';
import { consumerIdentifier, entityOf, REQUEST_STATS, statsdLine } from '../shared/statsd-line';
import { UdpSender } from '../shared/udp-sender';
import { datadogConfigSchema, type DatadogConfig } from './schema';

const senders = runtimeState(() => new UdpSender());

/** The DogStatsD lines of one entry: one per configured metric, tagged with service, status, consumer and its tags. */
export function datadogLines(config: DatadogConfig, entry: SerializedExchange): string[] {
  const service = entityOf(entry.service);
  const serviceName = service === null ? '' : (service.name ?? service.host ?? '').replace(/\./g, '_');
  const lines: string[] = [];
  for (const metric of config.metrics) {
    const stat = REQUEST_STATS[metric.name];
    const tags = [`${config.service_name_tag}:${serviceName}`, `${config.status_tag}:${entry.response.status}`];
    const consumer = metric.consumer_identifier === null ? null : consumerIdentifier(entry, metric.consumer_identifier);
    if (consumer !== null) tags.push(`${config.consumer_tag}:${metric.consumer_identifier === 'consumer_id' ? consumer.replace(/-/g, '_') : consumer}`);
    tags.push(...(metric.tags ?? []));
    lines.push(statsdLine(config.prefix, stat.stat, stat.value(entry), metric.stat_type, metric.sample_rate, `|#${tags.join(',')}`));
  }
  return lines;
}

/**
 * Kong's datadog: each finished exchange goes through the shared plugin queue; each batch becomes DogStatsD lines
 * (one datagram each) sent over UDP to the agent at `host:port`.
 */
export const datadog = definePlugin<DatadogConfig, unknown>({
  name: 'datadog',
  priority: 10,
  version: '3.9.0',
  configSchema: datadogConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: (ctx, config, summary) => {
    const pluginId = ctx.pluginId ?? 'datadog';
    const sender = senders.of(ctx.runtime);
    const handler = async (batch: SerializedExchange[]) => {
      for (const entry of batch) for (const line of datadogLines(config, entry)) await sender.send(config.host, config.port, line, 10_000);
    };
    queuesFor(ctx.runtime).enqueue(
      { name: pluginId, logTag: `datadog plugin ${pluginId}`, owner: pluginId, config: queueConfigOf(config), handler },
      logEntry(ctx, summary, { custom_fields_by_lua: null }, 'datadog'),
    );
  },
});
