import type { SerializedExchange } from '../shared/log-serializer';
import { consumerIdentifier, entityOf, REQUEST_STATS, statsdLine } from '../shared/statsd-line';
import type { StatsdConfig, StatsdMetric } from './schema';

const underscored = (value: string) => value.replace(/\./g, '_');

function serviceIdentifier(entry: SerializedExchange, kind: StatsdConfig['service_identifier_default']): string | null {
  const service = entityOf(entry.service);
  if (service === null) return null;
  const value = kind === 'service_id' ? service.id : kind === 'service_name' ? service.name : kind === 'service_host' ? service.host : (service.name ?? service.host);
  return typeof value === 'string' ? value : null;
}

function workspaceIdentifier(entry: SerializedExchange, kind: StatsdConfig['workspace_identifier_default']): string {
  if (kind === 'workspace_name') return entry.workspace_name;
  const wsId = (entityOf(entry.route) as { ws_id?: unknown } | null)?.ws_id ?? (entityOf(entry.service) as { ws_id?: unknown } | null)?.ws_id;
  return typeof wsId === 'string' ? wsId : entry.workspace_name;
}

/** Kong's scope of a metric name: `service.<identifier>` (dots as underscores), `service.unnamed`, or `global.unmatched`. */
function scopeOf(entry: SerializedExchange, kind: StatsdConfig['service_identifier_default']): string {
  if (entityOf(entry.service) === null) return 'global.unmatched';
  const id = serviceIdentifier(entry, kind);
  return `service.${id === null ? 'unnamed' : underscored(id)}`;
}

/** The tags of a metric in a tagged style; null without a service (the metric then goes out untagged). */
function tagsOf(config: StatsdConfig, metric: StatsdMetric, entry: SerializedExchange, node: string): Array<[string, string]> | null {
  const service = serviceIdentifier(entry, metric.service_identifier ?? config.service_identifier_default);
  if (service === null) return null;
  const tags: Array<[string, string]> = [['service', service]];
  const route = entityOf(entry.route);
  const routeName = route?.name ?? route?.id;
  if (typeof routeName === 'string') tags.push(['route', routeName]);
  tags.push(['workspace', workspaceIdentifier(entry, metric.workspace_identifier ?? config.workspace_identifier_default)]);
  const consumer = consumerIdentifier(entry, metric.consumer_identifier ?? config.consumer_identifier_default);
  if (consumer !== null) tags.push(['consumer', consumer]);
  tags.push(['node', node], ['status', String(entry.response.status)]);
  return tags;
}

/** One line in the configured tag style (`tag_style`), or plain when there are no tags. */
function taggedLine(config: StatsdConfig, prefix: string, stat: string, value: number, metric: StatsdMetric, tags: Array<[string, string]> | null): string {
  const type = metric.stat_type;
  if (tags === null || config.tag_style === null) return statsdLine(prefix, stat, value, type, metric.sample_rate);
  const pairs = (sep: string) => tags.map(([k, v]) => `${k}${sep}${v}`).join(',');
  if (config.tag_style === 'dogstatsd') return statsdLine(prefix, stat, value, type, metric.sample_rate, `|#${pairs(':')}`);
  if (config.tag_style === 'influxdb') return statsdLine(prefix, `${stat},${pairs('=')}`, value, type, metric.sample_rate);
  if (config.tag_style === 'librato') return statsdLine(prefix, `${stat}#${pairs('=')}`, value, type, metric.sample_rate);
  return statsdLine(prefix, `${stat}[${pairs('=')}]`, value, type, metric.sample_rate);
}

/** The per-consumer and per-status metrics, which Kong sends only without a tag style. */
function countLine(prefix: string, scope: string, metric: StatsdMetric, config: StatsdConfig, entry: SerializedExchange): string | null {
  const status = entry.response.status;
  const consumer = consumerIdentifier(entry, metric.consumer_identifier ?? config.consumer_identifier_default);
  const rate = metric.sample_rate;
  switch (metric.name) {
    case 'unique_users':
      return consumer === null ? null : statsdLine(prefix, `${scope}.user.uniques`, consumer, 'set', null);
    case 'request_per_user':
      return consumer === null ? null : statsdLine(prefix, `${scope}.user.${consumer}.request.count`, 1, 'counter', rate);
    case 'status_count':
      return statsdLine(prefix, `${scope}.status.${status}`, 1, 'counter', rate);
    case 'status_count_per_user':
      return consumer === null ? null : statsdLine(prefix, `${scope}.user.${consumer}.status.${status}`, 1, 'counter', rate);
    case 'status_count_per_workspace':
      return statsdLine(prefix, `${scope}.workspace.${workspaceIdentifier(entry, metric.workspace_identifier ?? config.workspace_identifier_default)}.status.${status}`, 1, 'counter', rate);
    case 'status_count_per_user_per_route': {
      const routeId = entityOf(entry.route)?.id;
      return consumer === null || typeof routeId !== 'string' ? null : statsdLine(prefix, `route.${routeId}.user.${consumer}.status.${status}`, 1, 'counter', rate);
    }
    default:
      return null;
  }
}

/**
 * The StatsD lines Kong's statsd plugin sends for one entry: per configured metric, under
 * `<prefix>[.node.<host>].<scope>.<stat>` without a tag style, or `<prefix>.<stat>` with tags in the chosen style.
 * `shdict_usage` reports nginx shared dictionaries, which a Gatehouse node does not have: it sends nothing.
 */
export function statsdLines(config: StatsdConfig, entry: SerializedExchange, hostname: string): string[] {
  const node = underscored(hostname);
  const prefix = config.hostname_in_prefix && config.tag_style === null ? `${config.prefix}.node.${node}` : config.prefix;
  const lines: string[] = [];
  for (const metric of config.metrics) {
    if (metric.name === 'shdict_usage') continue;
    const scope = scopeOf(entry, metric.service_identifier ?? config.service_identifier_default);
    if (!(metric.name in REQUEST_STATS)) {
      const line = config.tag_style === null ? countLine(prefix, scope, metric, config, entry) : null;
      if (line !== null) lines.push(line);
      continue;
    }
    const stat = REQUEST_STATS[metric.name as keyof typeof REQUEST_STATS];
    const value = stat.value(entry);
    if (value === -1) continue;
    if (config.tag_style === null) lines.push(statsdLine(prefix, `${scope}.${stat.stat}`, value, metric.stat_type, metric.sample_rate));
    else lines.push(taggedLine(config, prefix, stat.stat, value, metric, tagsOf(config, metric, entry, node)));
  }
  return lines;
}

/** Status codes the plugin reports: all without `allow_status_codes`, else those in one of its `from-to` ranges. */
export function statusAllowed(config: StatsdConfig, status: number): boolean {
  if (config.allow_status_codes === null) return true;
  return config.allow_status_codes.some((range) => {
    const [from, to] = range.split('-').map(Number);
    return status >= from! && status <= to!;
  });
}
