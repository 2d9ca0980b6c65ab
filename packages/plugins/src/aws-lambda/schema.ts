import { z } from 'zod';

const port = z.number().int().min(0, 'value should be between 0 and 65535').max(65535, 'value should be between 0 and 65535');
const text = () => z.string().nullable().default(null);

export const awsLambdaConfigSchema = z
  .object({
    timeout: z.number().default(60000),
    keepalive: z.number().default(60000),
    aws_key: text(),
    aws_secret: text(),
    aws_assume_role_arn: text(),
    aws_role_session_name: z.string().default('kong'),
    aws_sts_endpoint_url: z.url({ protocol: /^https?$/, error: 'missing host in url' }).nullable().default(null),
    aws_region: text(),
    function_name: text(),
    qualifier: text(),
    invocation_type: z.enum(['RequestResponse', 'Event', 'DryRun']).default('RequestResponse'),
    log_type: z.enum(['Tail', 'None']).default('Tail'),
    host: text(),
    port: port.nullable().default(443),
    disable_https: z.boolean().default(false),
    unhandled_status: z.number().int().min(100, 'value should be between 100 and 999').max(999, 'value should be between 100 and 999').nullable().default(null),
    forward_request_method: z.boolean().default(false),
    forward_request_uri: z.boolean().default(false),
    forward_request_headers: z.boolean().default(false),
    forward_request_body: z.boolean().default(false),
    is_proxy_integration: z.boolean().default(false),
    awsgateway_compatible: z.boolean().default(false),
    proxy_url: z.url({ protocol: /^https?$/, error: 'missing host in url' }).nullable().default(null),
    skip_large_bodies: z.boolean().default(true),
    base64_encode_body: z.boolean().default(true),
    aws_imds_protocol_version: z.enum(['v1', 'v2']).default('v1'),
    empty_arrays_mode: z.enum(['legacy', 'correct']).default('legacy'),
  })
  .strict();
export type AwsLambdaConfig = z.infer<typeof awsLambdaConfigSchema>;

/** Kong's entity checks, with its messages. */
export function checkAwsLambdaConfig(config: AwsLambdaConfig): Record<string, string> | null {
  if ((config.aws_key === null) !== (config.aws_secret === null)) return { '@entity': "all or none of these fields must be set: 'config.aws_key', 'config.aws_secret'" };
  if (config.proxy_url !== null && !config.proxy_url.startsWith('http://')) return { '@entity': 'proxy_url scheme must be http' };
  return null;
}
