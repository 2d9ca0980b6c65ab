import { z } from 'zod';
import { queueField } from '../shared/queue-schema';
import { propagationSchema } from '../shared/tracing/propagation';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const url = () => z.url({ protocol: /^https?$/, error: 'missing host in url' });
const timeout = (value: number) => z.number().int().min(0, 'value should be between 0 and 2147483646').max(2147483646, 'value should be between 0 and 2147483646').default(value);

/** Kong 3.9's `opentelemetry` config; `endpoint` is the deprecated name of `traces_endpoint`. */
export const openTelemetryConfigSchema = z
  .object({
    traces_endpoint: url().nullable().default(null),
    /** deprecated: read as `traces_endpoint` when that is not set */
    endpoint: url().nullable().default(null),
    logs_endpoint: url().nullable().default(null),
    headers: z.record(z.string().regex(HEADER_NAME, 'bad header name'), z.string()).nullable().default(null),
    resource_attributes: z.record(z.string(), z.string().min(1)).nullable().default(null),
    queue: queueField({ max_batch_size: 200 }),
    batch_span_count: z.number().int().nullable().default(null),
    batch_flush_delay: z.number().int().nullable().default(null),
    connect_timeout: timeout(1000),
    send_timeout: timeout(5000),
    read_timeout: timeout(5000),
    http_response_header_for_traceid: z.string().nullable().default(null),
    header_type: z.enum(['preserve', 'ignore', 'b3', 'b3-single', 'w3c', 'jaeger', 'ot', 'aws', 'gcp', 'datadog']).nullable().default('preserve'),
    sampling_rate: z.number().min(0, 'value should be between 0 and 1').max(1, 'value should be between 0 and 1').nullable().default(null),
    propagation: propagationSchema('w3c'),
  })
  .strict();

export type OpenTelemetryConfig = z.infer<typeof openTelemetryConfigSchema>;

/** Kong's entity check on the record: at least one of the endpoints. */
export function checkOpenTelemetryConfig(config: OpenTelemetryConfig): Record<string, string> | null {
  if (config.traces_endpoint === null && config.endpoint === null && config.logs_endpoint === null) {
    return { '@config': "at least one of these fields must be non-empty: 'traces_endpoint', 'logs_endpoint'" };
  }
  return null;
}
