import { z } from 'zod';
import { hostField, portField } from '../shared/log-target';
import { queueField } from '../shared/queue-schema';
import { CONSUMER_IDENTIFIERS, sampleRateRequired } from '../shared/statsd-line';

const STAT_NAMES = ['kong_latency', 'latency', 'request_count', 'request_size', 'response_size', 'upstream_latency'] as const;
const STAT_TYPES = ['counter', 'gauge', 'histogram', 'meter', 'set', 'timer', 'distribution'] as const;

const metricSchema = z
  .object({
    name: z.enum(STAT_NAMES),
    stat_type: z.enum(STAT_TYPES),
    tags: z.array(z.string().regex(/^.*[^:]$/)).nullable().default(null),
    sample_rate: z.number().min(0).max(1).nullable().default(null),
    consumer_identifier: z.enum(CONSUMER_IDENTIFIERS).nullable().default(null),
  })
  .strict()
  .superRefine(sampleRateRequired);

const timer = (name: (typeof STAT_NAMES)[number]) => ({ name, stat_type: 'timer' as const, tags: ['app:kong'], sample_rate: null, consumer_identifier: 'custom_id' as const });

/** Kong's default metrics: the request count as a counter, sizes and latencies as timers, tagged `app:kong`. */
const DEFAULT_METRICS = [
  { name: 'request_count' as const, stat_type: 'counter' as const, tags: ['app:kong'], sample_rate: 1, consumer_identifier: 'custom_id' as const },
  timer('latency'),
  timer('request_size'),
  timer('response_size'),
  timer('upstream_latency'),
  timer('kong_latency'),
];

/** Kong 3.x `datadog` config (the deprecated `retry_count`, `queue_size`, `flush_timeout` are accepted). */
export const datadogConfigSchema = z
  .object({
    host: hostField().default('localhost'),
    port: portField().default(8125),
    prefix: z.string().default('kong'),
    service_name_tag: z.string().default('name'),
    status_tag: z.string().default('status'),
    consumer_tag: z.string().default('consumer'),
    retry_count: z.number().int().nullable().default(null),
    queue_size: z.number().int().nullable().default(null),
    flush_timeout: z.number().nullable().default(null),
    queue: queueField(),
    metrics: z.array(metricSchema).default(DEFAULT_METRICS),
  })
  .strict();

export type DatadogConfig = z.infer<typeof datadogConfigSchema>;
