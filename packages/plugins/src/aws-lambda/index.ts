import { ProxyAgent, request, type Dispatcher } from 'undici';
import { definePlugin, type PluginContext, type PluginResponse } from '../contract';
import { httpClients } from '../shared/http-clients';
import { signAwsRequest } from '../shared/aws-signer';
import { resolveAwsCredentials } from '../shared/aws-credentials';
import { lambdaPayload } from './payload';
import { awsLambdaConfigSchema, checkAwsLambdaConfig, type AwsLambdaConfig } from './schema';

const UNEXPECTED: PluginResponse = { status: 500, body: { message: 'An unexpected error occurred' } };
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'content-length']);

/** Lambda's Invoke URL: `lambda.<region>.amazonaws.com` unless `host` names another (a local stand-in, an endpoint). */
function invokeUrl(config: AwsLambdaConfig, region: string): URL {
  const host = config.host ?? `lambda.${region}.amazonaws.com`;
  const url = new URL(`${config.disable_https ? 'http' : 'https'}://${host}:${config.port ?? 443}/2015-03-31/functions/${encodeURIComponent(config.function_name ?? '')}/invocations`);
  if (config.qualifier !== null) url.searchParams.set('Qualifier', config.qualifier);
  return url;
}

/** Forward-proxy pools per node, one per `proxy_url`, closed when the node stops. */
const clients = httpClients();
const proxyFor = (ctx: PluginContext, config: AwsLambdaConfig) => {
  const uri = config.proxy_url;
  return uri === null ? null : clients.of(ctx.runtime).get(uri, () => new ProxyAgent({ uri, requestTls: { rejectUnauthorized: false } }));
};

/** Lambda's proxy-integration answer (`statusCode`, `headers`, `multiValueHeaders`, `body`, `isBase64Encoded`). */
function proxyIntegration(text: string): PluginResponse | string {
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    return err instanceof Error ? err.message : 'proxy response must be json format';
  }
  const status = Number(answer.statusCode);
  if (!Number.isInteger(status) || status < 100 || status > 599) return 'statusCode validation failed';
  if (answer.headers !== undefined && (answer.headers === null || typeof answer.headers !== 'object')) return 'headers must be a table';
  if (answer.body !== undefined && typeof answer.body !== 'string') return 'body must be a string';
  if (answer.isBase64Encoded !== undefined && typeof answer.isBase64Encoded !== 'boolean') return 'isBase64Encoded must be a boolean';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries((answer.headers as Record<string, unknown> | undefined) ?? {})) headers[name.toLowerCase()] = String(value);
  for (const [name, values] of Object.entries((answer.multiValueHeaders as Record<string, unknown[]> | undefined) ?? {})) if (Array.isArray(values)) headers[name.toLowerCase()] = values.map(String).join(', ');
  const raw = typeof answer.body === 'string' ? answer.body : '';
  return { status, headers, body: answer.isBase64Encoded === true ? Buffer.from(raw, 'base64') : Buffer.from(raw) };
}

/** Invokes the function with the request's payload and answers with what it returned (Kong's access phase). */
async function invoke(ctx: PluginContext, config: AwsLambdaConfig): Promise<PluginResponse> {
  const region = config.aws_region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? null;
  const log = (message: string, detail: Record<string, unknown> = {}) => ctx.runtime.log?.error(`aws-lambda: ${message}`, { function: config.function_name, ...detail });
  if (region === null) return log('no region specified'), UNEXPECTED;
  const credentials = await resolveAwsCredentials({
    accessKeyId: config.aws_key,
    secretAccessKey: config.aws_secret,
    region,
    imds: config.aws_imds_protocol_version,
    assumeRole: config.aws_assume_role_arn !== null ? { roleArn: config.aws_assume_role_arn, sessionName: config.aws_role_session_name, stsEndpoint: config.aws_sts_endpoint_url } : null,
  });
  if (typeof credentials === 'string') return log(credentials), UNEXPECTED;
  const url = invokeUrl(config, region);
  const body = JSON.stringify(await lambdaPayload(ctx, config));
  const headers = { 'content-type': 'application/json', 'x-amz-invocation-type': config.invocation_type, 'x-amz-log-type': config.log_type };
  let res: Dispatcher.ResponseData;
  try {
    const signed = await signAwsRequest({ url, method: 'POST', headers, body }, 'lambda', region, credentials);
    const proxy = proxyFor(ctx, config);
    res = await request(url, { method: 'POST', headers: signed, body, headersTimeout: config.timeout, bodyTimeout: config.timeout, ...(proxy !== null ? { dispatcher: proxy } : {}) });
  } catch (err) {
    return log('the function could not be invoked', { reason: err instanceof Error ? err.message : String(err) }), UNEXPECTED;
  }
  const text = await res.body.text();
  if (res.statusCode >= 400) return log('the invocation failed', { status: res.statusCode, answer: text.slice(0, 200) }), UNEXPECTED;
  const answerHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  if (config.is_proxy_integration) {
    const proxied = proxyIntegration(text);
    if (typeof proxied === 'string') {
      log('could not JSON decode the Lambda function response', { reason: proxied });
      return { status: 502, body: { message: 'Bad Gateway', error: `could not JSON decode Lambda function response: ${proxied}` } };
    }
    return { ...proxied, headers: { ...answerHeaders, ...proxied.headers }, proxied: true };
  }
  const unhandled = config.unhandled_status !== null && res.headers['x-amz-function-error'] === 'Unhandled';
  return { status: unhandled ? config.unhandled_status! : res.statusCode, body: Buffer.from(text), headers: answerHeaders, proxied: true };
}

/** Invokes an AWS Lambda function in place of the service (Kong's priority 750), signed with AWS Signature V4. */
export const awsLambda = definePlugin<AwsLambdaConfig, unknown>({
  name: 'aws-lambda',
  priority: 750,
  version: '3.9.0',
  configSchema: awsLambdaConfigSchema,
  checkConfig: checkAwsLambdaConfig,
  auth: false,
  noConsumer: false,
  init: clients.init,
  access: invoke,
});
