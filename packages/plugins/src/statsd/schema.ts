import { z } from 'zod';
import { hostField, portField } from '../shared/log-target';
import { queueField } from '../shared/queue-schema';
import { CONSUMER_IDENTIFIERS, sampleRateRequired } from '../shared/statsd-line';

export const METRIC_NAMES = [
  'kong_latency',
  'latency',
  'request_count',
  'request_per_user',
  'request_size',
  'response_size',
  'status_count',
  'status_count_per_user',
  'unique_users',
  'upstream_latency',
  'status_count_per_workspace',
  'status_count_per_user_per_route',
  'shdict_usage',
] as const;
const STAT_TYPES = ['counter', 'gauge', 'histogram', 'meter', 'set', 'timer'] as const;
export const SERVICE_IDENTIFIERS = ['service_id', 'service_name', 'service_host', 'service_name_or_host'] as const;
export const WORKSPACE_IDENTIFIERS = ['workspace_id', 'workspace_name'] as const;
const TAG_STYLES = ['dogstatsd', 'influxdb', 'librato', 'signalfx'] as const;

const metricSchema = z
  .object({
    name: z.enum(METRIC_NAMES),
    stat_type: z.enum(STAT_TYPES),
    sample_rate: z.number().gt(0).nullable().default(null),
    consumer_identifier: z.enum(CONSUMER_IDENTIFIERS).nullable().default(null),
    service_identifier: z.enum(SERVICE_IDENTIFIERS).nullable().default(null),
    workspace_identifier: z.enum(WORKSPACE_IDENTIFIERS).nullable().default(null),
  })
  .strict()
  .superRefine(sampleRateRequired);

type MetricName = (typeof METRIC_NAMES)[number];
type StatType = (typeof STAT_TYPES)[number];
const metric = (name: MetricName, stat_type: StatType, sample_rate: number | null) => ({
  name,
  stat_type,
  sample_rate,
  consumer_identifier: null,
  service_identifier: null,
  workspace_identifier: null,
});

/** Kong's default metrics, in its order. */
const DEFAULT_METRICS = [
  metric('request_count', 'counter', 1),
  metric('latency', 'timer', null),
  metric('request_size', 'counter', 1),
  metric('status_count', 'counter', 1),
  metric('response_size', 'counter', 1),
  metric('unique_users', 'set', null),
  metric('request_per_user', 'counter', 1),
  metric('upstream_latency', 'timer', null),
  metric('kong_latency', 'timer', null),
  metric('status_count_per_user', 'counter', 1),
  metric('status_count_per_workspace', 'counter', 1),
  metric('status_count_per_user_per_route', 'counter', 1),
  metric('shdict_usage', 'gauge', 1),
];

/** Kong 3.x `statsd` config (the deprecated `retry_count`, `queue_size`, `flush_timeout` are accepted). */
export const statsdConfigSchema = z
  .object({
    host: hostField().default('localhost'),
    port: portField().default(8125),
    prefix: z.string().default('kong'),
    metrics: z.array(metricSchema).default(DEFAULT_METRICS),
    allow_status_codes: z.array(z.string().regex(/^[0-9]+-[0-9]+$/)).nullable().default(null),
    udp_packet_size: z.number().min(0).max(65507).default(0),
    use_tcp: z.boolean().default(false),
    hostname_in_prefix: z.boolean().default(false),
    consumer_identifier_default: z.enum(CONSUMER_IDENTIFIERS).default('custom_id'),
    service_identifier_default: z.enum(SERVICE_IDENTIFIERS).default('service_name_or_host'),
    workspace_identifier_default: z.enum(WORKSPACE_IDENTIFIERS).default('workspace_id'),
    retry_count: z.number().int().nullable().default(null),
    queue_size: z.number().int().nullable().default(null),
    flush_timeout: z.number().nullable().default(null),
    tag_style: z.enum(TAG_STYLES).nullable().default(null),
    queue: queueField(),
  })
  .strict();

export type StatsdConfig = z.infer<typeof statsdConfigSchema>;
export type StatsdMetric = StatsdConfig['metrics'][number];
