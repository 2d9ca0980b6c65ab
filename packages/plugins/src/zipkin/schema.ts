import { z } from 'zod';
import { queueField } from '../shared/queue-schema';
import { propagationSchema } from '../shared/tracing/propagation';

/** Tags the plugin sets itself: a static tag may not use these names. */
export const PROTECTED_TAGS = [
  'error',
  'http.method',
  'http.path',
  'http.status_code',
  'kong.balancer.state',
  'kong.balancer.try',
  'kong.consumer',
  'kong.credential',
  'kong.node.id',
  'kong.route',
  'kong.service',
  'lc',
  'peer.hostname',
] as const;

const timeout = (value: number) => z.number().int().min(0, 'value should be between 0 and 2147483646').max(2147483646, 'value should be between 0 and 2147483646').default(value);
const FORMATS = ['b3', 'b3-single', 'w3c', 'jaeger', 'ot', 'aws', 'datadog', 'gcp'] as const;

const staticTag = z
  .object({
    name: z.string().refine((name) => !(PROTECTED_TAGS as readonly string[]).includes(name), { error: `must not be one of: ${PROTECTED_TAGS.join(', ')}` }),
    value: z.string(),
  })
  .strict();

/** Kong 3.9's `zipkin` config (`header_type` and `default_header_type` are deprecated in favour of `propagation`). */
export const zipkinConfigSchema = z
  .object({
    local_service_name: z.string().default('kong'),
    http_endpoint: z.url({ protocol: /^https?$/, error: 'missing host in url' }).nullable().default(null),
    sample_ratio: z.number().min(0, 'value should be between 0 and 1').max(1, 'value should be between 0 and 1').default(0.001),
    default_service_name: z.string().nullable().default(null),
    include_credential: z.boolean().default(true),
    traceid_byte_count: z.union([z.literal(8), z.literal(16)], { error: 'expected one of: 8, 16' }).default(16),
    header_type: z.enum(['preserve', 'ignore', ...FORMATS]).default('preserve'),
    default_header_type: z.enum(FORMATS).default('b3'),
    tags_header: z.string().default('Zipkin-Tags'),
    static_tags: z
      .array(staticTag)
      .nullable()
      .default(null)
      .refine((tags) => tags === null || new Set(tags.map((t) => t.name)).size === tags.length, {
        error: (issue) => {
          const seen = new Set<string>();
          const repeated = (issue.input as Array<{ name: string }>).find((t) => (seen.has(t.name) ? true : (seen.add(t.name), false)));
          return `repeated tags are not allowed: ${repeated?.name ?? ''}`;
        },
      }),
    http_span_name: z.enum(['method', 'method_path']).default('method'),
    connect_timeout: timeout(2000),
    send_timeout: timeout(5000),
    read_timeout: timeout(5000),
    http_response_header_for_traceid: z.string().nullable().default(null),
    phase_duration_flavor: z.enum(['annotations', 'tags']).default('annotations'),
    queue: queueField(),
    propagation: propagationSchema('b3'),
  })
  .strict();

export type ZipkinConfig = z.infer<typeof zipkinConfigSchema>;
