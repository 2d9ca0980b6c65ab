import { z } from 'zod';
import type { SerializedExchange } from './log-serializer';

/** StatsD's type suffixes by Kong's `stat_type` names (`distribution` is DogStatsD's). */
export const STAT_TYPE_SUFFIX = { gauge: 'g', counter: 'c', timer: 'ms', histogram: 'h', meter: 'm', set: 's', distribution: 'd' } as const;
export type StatType = keyof typeof STAT_TYPE_SUFFIX;

/** One StatsD line: `<prefix>.<stat>:<value>|<type>[|@<rate>]`, then whatever tag suffix the flavour adds. */
export function statsdLine(prefix: string, stat: string, value: string | number, type: StatType, sampleRate: number | null, suffix = ''): string {
  const rate = sampleRate !== null && sampleRate !== 1 ? `|@${sampleRate}` : '';
  return `${prefix}.${stat}:${value}|${STAT_TYPE_SUFFIX[type]}${rate}${suffix}`;
}

/** The per-request values both StatsD plugins report, by Kong's metric name, and their stat names. */
export const REQUEST_STATS = {
  request_size: { stat: 'request.size', value: (e: SerializedExchange) => e.request.size },
  response_size: { stat: 'response.size', value: (e: SerializedExchange) => e.response.size },
  latency: { stat: 'latency', value: (e: SerializedExchange) => e.latencies.request },
  upstream_latency: { stat: 'upstream_latency', value: (e: SerializedExchange) => e.latencies.proxy },
  kong_latency: { stat: 'kong_latency', value: (e: SerializedExchange) => e.latencies.kong },
  request_count: { stat: 'request.count', value: () => 1 },
} as const;

export const CONSUMER_IDENTIFIERS = ['consumer_id', 'custom_id', 'username'] as const;
export type ConsumerIdentifier = (typeof CONSUMER_IDENTIFIERS)[number];

interface EntityFields {
  id?: string;
  name?: string | null;
  host?: string;
  custom_id?: string | null;
  username?: string | null;
}

export function entityOf(value: unknown): EntityFields | null {
  return typeof value === 'object' && value !== null ? (value as EntityFields) : null;
}

/** The consumer's identifier by `kind`; null without a consumer or without that field. */
export function consumerIdentifier(entry: SerializedExchange, kind: ConsumerIdentifier): string | null {
  const consumer = entityOf(entry.consumer);
  if (consumer === null) return null;
  const value = kind === 'consumer_id' ? consumer.id : kind === 'custom_id' ? consumer.custom_id : consumer.username;
  return typeof value === 'string' ? value : null;
}

/** Kong's check on a metric record: counters and gauges need a `sample_rate`. */
export function sampleRateRequired(metric: { stat_type: string; sample_rate?: number | null }, ctx: z.RefinementCtx): void {
  if ((metric.stat_type === 'counter' || metric.stat_type === 'gauge') && (metric.sample_rate === undefined || metric.sample_rate === null)) {
    ctx.addIssue({ code: 'custom', path: ['sample_rate'], message: 'required field missing' });
  }
}
