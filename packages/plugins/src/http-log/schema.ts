import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { framingHeaderMessage, isFramingHeader } from '../shared/header-fields';

/** Kong 3.x plugin queue settings (`kong.tools.queue`), with its defaults and bounds. */
export const queueSchema = z
  .object({
    max_batch_size: z.number().int().min(1).max(1_000_000).default(1),
    max_coalescing_delay: z.number().min(0).max(3600).default(1),
    max_entries: z.number().int().min(1).max(1_000_000).default(10_000),
    max_bytes: z.number().int().min(1).nullable().default(null),
    max_retry_time: z.number().min(0).default(60),
    initial_retry_delay: z.number().min(0.001).max(1_000_000).default(0.01),
    max_retry_delay: z.number().min(0.001).max(1_000_000).default(60),
    concurrency_limit: z.union([z.literal(1), z.literal(-1)]).default(1),
  })
  .strict();

export type QueueConfig = z.infer<typeof queueSchema>;

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** Kong 3.x `http-log` config (the deprecated `retry_count`, `queue_size`, `flush_timeout` are accepted and unused). */
export const httpLogConfigSchema = z
  .object({
    http_endpoint: z.url({ protocol: /^https?$/, error: 'missing host in url' }),
    method: z.enum(['POST', 'PUT', 'PATCH']).default('POST'),
    content_type: z.enum(['application/json', 'application/json; charset=utf-8']).default('application/json'),
    timeout: z.number().int().min(0).default(10_000),
    keepalive: z.number().int().min(0).default(60_000),
    retry_count: z.number().int().nullable().default(null),
    queue_size: z.number().int().nullable().default(null),
    flush_timeout: z.number().nullable().default(null),
    headers: z
      .record(z.string().regex(HEADER_NAME, 'bad header name'), z.string())
      .nullable()
      .default(null)
      .refine((h) => h === null || !Object.keys(h).some((n) => ['host', 'content-length', 'content-type'].includes(n.toLowerCase())), {
        message: 'cannot contain Host, Content-Length or Content-Type',
        abort: true,
      })
      .refine((h) => h === null || !Object.keys(h).some(isFramingHeader), {
        error: (issue) => framingHeaderMessage(Object.keys(issue.input as Record<string, string>).find(isFramingHeader) ?? ''),
      }),
    queue: queueSchema.default(queueSchema.parse({})),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type HttpLogConfig = z.infer<typeof httpLogConfigSchema>;
