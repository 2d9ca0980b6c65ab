import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { framingHeaderMessage, isFramingHeader } from '../shared/header-fields';
import { queueField } from '../shared/queue-schema';

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
    queue: queueField(),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type HttpLogConfig = z.infer<typeof httpLogConfigSchema>;
