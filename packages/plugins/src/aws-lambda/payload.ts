import type { PluginContext } from '../contract';
import type { AwsLambdaConfig } from './schema';

type Json = Record<string, unknown>;

/** Content types whose body is sent as text even with `base64_encode_body` (Kong's `raw_content_types`). */
const RAW_TYPES = new Set(['text/plain', 'text/html', 'application/xml', 'text/xml', 'application/soap+xml']);

/** Query arguments as Kong's `get_query`: one value as a string, several as a list. */
function queryArgs(query: URLSearchParams): Json {
  const out: Json = {};
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    out[name] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/** The body's arguments as Kong's `get_body` reads them (JSON or a form), or null when its type is not one of those. */
function bodyArgs(contentType: string, body: Buffer): Json | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : {};
    } catch {
      return {};
    }
  }
  if (type === 'application/x-www-form-urlencoded') return queryArgs(new URLSearchParams(body.toString('utf8')));
  return null;
}

function firstHeaders(headers: PluginContext['req']['headers']): { single: Record<string, string>; multi: Record<string, string[]> } {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    single[name] = list[0]!;
    multi[name] = list;
  }
  return { single, multi };
}

/** Amazon API Gateway's proxy event (version 1.0), as Kong's `awsgateway_compatible` builds it. */
async function apiGatewayEvent(ctx: PluginContext, config: AwsLambdaConfig): Promise<Json> {
  const req = ctx.req;
  const { single, multi } = firstHeaders(req.headers);
  const query = queryArgs(req.query);
  const multiQuery: Json = {};
  for (const name of new Set(req.query.keys())) multiQuery[name] = req.query.getAll(name);
  const raw = await req.readBody();
  const encode = raw.length > 0 && config.base64_encode_body;
  const host = String(req.headers.host ?? '').split(':')[0]!;
  const started = Date.now();
  return {
    version: '1.0',
    resource: ctx.route?.paths?.[0] ?? req.path,
    path: req.path,
    httpMethod: req.method,
    headers: single,
    multiValueHeaders: multi,
    pathParameters: { ...(req.uriCaptures?.named ?? {}) },
    queryStringParameters: query,
    multiValueQueryStringParameters: multiQuery,
    body: encode ? raw.toString('base64') : raw.toString('utf8'),
    isBase64Encoded: encode,
    requestContext: {
      path: req.path,
      protocol: `HTTP/${req.httpVersion ?? '1.1'}`,
      httpMethod: req.method,
      domainName: host,
      domainPrefix: host.split('.')[0],
      identity: { sourceIp: req.clientIp, userAgent: single['user-agent'] },
      requestTimeEpoch: started,
      resourcePath: req.path,
    },
  };
}

/**
 * The invocation payload, as Kong's aws-lambda builds it: the API Gateway event with `awsgateway_compatible`; the
 * `forward_request_*` fields when any is on; else the query arguments merged with the body's.
 */
export async function lambdaPayload(ctx: PluginContext, config: AwsLambdaConfig): Promise<Json> {
  if (config.awsgateway_compatible) return apiGatewayEvent(ctx, config);
  const req = ctx.req;
  const forwarding = config.forward_request_body || config.forward_request_headers || config.forward_request_method || config.forward_request_uri;
  if (!forwarding) {
    const body = req.method === 'GET' || req.method === 'HEAD' ? Buffer.alloc(0) : await req.readBody();
    return { ...queryArgs(req.query), ...(bodyArgs(String(req.headers['content-type'] ?? ''), body) ?? {}) };
  }
  const payload: Json = {};
  if (config.forward_request_method) payload.request_method = req.method;
  if (config.forward_request_headers) payload.request_headers = firstHeaders(req.headers).single;
  if (config.forward_request_uri) {
    payload.request_uri = req.rawQuery ? `${req.path}?${req.rawQuery}` : req.path;
    payload.request_uri_args = queryArgs(req.query);
  }
  if (config.forward_request_body) {
    const type = String(req.headers['content-type'] ?? '');
    const raw = await req.readBody();
    const args = bodyArgs(type, raw);
    const encode = args === null && !RAW_TYPES.has(type.split(';')[0]!.trim().toLowerCase()) && config.base64_encode_body;
    payload.request_body = encode ? raw.toString('base64') : raw.toString('utf8');
    if (encode) payload.request_body_base64 = true;
    payload.request_body_args = args ?? {};
  }
  return payload;
}
