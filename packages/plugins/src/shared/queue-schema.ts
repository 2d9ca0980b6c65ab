import { z } from 'zod';
import { perConfig } from './per-config';

/**
 * Kong 3.x plugin queue settings (`kong.tools.queue_schema`), with its defaults and bounds. A plugin whose Kong schema
 * changes a default (opentelemetry's `max_batch_size` 200) builds its field with `queueField({ max_batch_size: 200 })`.
 */
export function queueSchemaWith(defaults: Partial<QueueDefaults> = {}) {
  const d = { ...KONG_QUEUE_DEFAULTS, ...defaults };
  return z
    .object({
      max_batch_size: z.number().int().min(1).max(1_000_000).default(d.max_batch_size),
      max_coalescing_delay: z.number().min(0).max(3600).default(d.max_coalescing_delay),
      max_entries: z.number().int().min(1).max(1_000_000).default(d.max_entries),
      max_bytes: z.number().int().nullable().default(d.max_bytes),
      // -1 (or any negative time): a failed batch is not retried
      max_retry_time: z.number().default(d.max_retry_time),
      initial_retry_delay: z.number().min(0.001).max(1_000_000).default(d.initial_retry_delay),
      max_retry_delay: z.number().min(0.001).max(1_000_000).default(d.max_retry_delay),
      concurrency_limit: z.union([z.literal(1), z.literal(-1)]).default(d.concurrency_limit),
    })
    .strict();
}

interface QueueDefaults {
  max_batch_size: number;
  max_coalescing_delay: number;
  max_entries: number;
  max_bytes: number | null;
  max_retry_time: number;
  initial_retry_delay: number;
  max_retry_delay: number;
  concurrency_limit: 1 | -1;
}

const KONG_QUEUE_DEFAULTS: QueueDefaults = {
  max_batch_size: 1,
  max_coalescing_delay: 1,
  max_entries: 10_000,
  max_bytes: null,
  max_retry_time: 60,
  initial_retry_delay: 0.01,
  max_retry_delay: 60,
  concurrency_limit: 1,
};

export const queueSchema = queueSchemaWith();

export type QueueConfig = z.infer<typeof queueSchema>;

/** The `queue` field of a plugin config: the record with its defaults, itself defaulted when absent. */
export function queueField(defaults: Partial<QueueDefaults> = {}) {
  const schema = queueSchemaWith(defaults);
  return schema.default(schema.parse({}));
}

/** The deprecated top-level fields some logging plugins still accept (Kong moves them into `queue` when set). */
export interface LegacyQueueFields {
  queue_size?: number | null;
  flush_timeout?: number | null;
  batch_span_count?: number | null;
  batch_flush_delay?: number | null;
}

/**
 * The queue settings a plugin's entries go through, as Kong's `Queue.get_plugin_params`: `config.queue`, with the
 * deprecated `queue_size` / `batch_span_count` taken as `max_batch_size` and `flush_timeout` / `batch_flush_delay` as
 * `max_coalescing_delay` when set to something other than their old defaults.
 */
export function pluginQueueConfig(queue: QueueConfig, legacy: LegacyQueueFields = {}): QueueConfig {
  const out = { ...queue };
  if (legacy.queue_size != null && legacy.queue_size !== 1) out.max_batch_size = legacy.queue_size;
  if (legacy.flush_timeout != null && legacy.flush_timeout !== 2) out.max_coalescing_delay = legacy.flush_timeout;
  if (legacy.batch_span_count != null && legacy.batch_span_count !== 200) out.max_batch_size = legacy.batch_span_count;
  if (legacy.batch_flush_delay != null && legacy.batch_flush_delay !== 3) out.max_coalescing_delay = legacy.batch_flush_delay;
  return out;
}

/** `pluginQueueConfig` of a plugin config, built once per config object (one per snapshot). */
export const queueConfigOf = perConfig((config: { queue: QueueConfig } & LegacyQueueFields): QueueConfig => pluginQueueConfig(config.queue, config));
