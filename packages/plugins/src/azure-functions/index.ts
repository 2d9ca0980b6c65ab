import { Agent, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { definePlugin, type PluginContext, type PluginResponse } from '../contract';
import { httpClients } from '../shared/http-clients';
import { startInternalRequest } from '../shared/tracing/internal-request';

export const azureFunctionsConfigSchema = z
  .object({
    timeout: z.number().default(600000),
    keepalive: z.number().default(60000),
    https: z.boolean().default(true),
    https_verify: z.boolean().default(false),
    apikey: z.string().nullable().default(null),
    clientid: z.string().nullable().default(null),
    appname: z.string(),
    hostdomain: z.string().default('azurewebsites.net'),
    routeprefix: z.string().nullable().default('api'),
    functionname: z.string(),
  })
  .strict();
export type AzureFunctionsConfig = z.infer<typeof azureFunctionsConfigSchema>;

/** Request headers not passed on: the client's Host, and hop-by-hop ones. */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length']);
/** Response headers not passed back (the gateway frames the answer itself). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'content-length']);

const strip = (s: string) => s.replace(/^\/+|\/+$/g, '');

/**
 * The function's URL as Kong builds it: `<scheme>://<appname>.<hostdomain>/<routeprefix>/<functionname>?<query>`, on
 * port 443 or 80. A `hostdomain` ending in `:<port>` (a self-hosted Functions runtime) names its port.
 */
export function functionUrl(config: AzureFunctionsConfig, rawQuery: string): URL {
  const prefix = strip(config.routeprefix ?? '');
  const path = `${prefix !== '' ? `/${prefix}` : ''}/${strip(config.functionname)}`;
  const host = `${config.appname}.${config.hostdomain}`;
  const withPort = /:\d+$/.test(host) ? host : `${host}:${config.https ? 443 : 80}`;
  const url = new URL(`${config.https ? 'https' : 'http'}://${withPort}${path}`);
  url.search = rawQuery;
  return url;
}

/** Keep-alive pools per node, one per `keepalive` idle time and `https_verify`, closed when the node stops. */
const clients = httpClients();
const agentFor = (ctx: PluginContext, config: AzureFunctionsConfig) =>
  clients.of(ctx.runtime).get(`${config.keepalive}|${config.https_verify}`, () => new Agent({ keepAliveTimeout: Math.max(1, config.keepalive), connect: { rejectUnauthorized: config.https_verify } }));

async function invoke(ctx: PluginContext, config: AzureFunctionsConfig): Promise<PluginResponse> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.req.headers)) if (value !== undefined && !DROPPED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  if (config.apikey !== null) headers['x-functions-key'] = config.apikey;
  if (config.clientid !== null) headers['x-functions-clientid'] = config.clientid;
  const body = ctx.req.method === 'GET' || ctx.req.method === 'HEAD' ? undefined : await ctx.req.readBody();
  const url = functionUrl(config, ctx.req.rawQuery ?? '');
  const traced = startInternalRequest(ctx.spans, url, ctx.req.method, headers);
  let res: Dispatcher.ResponseData;
  let answerBody: Buffer;
  try {
    res = await request(url, { method: ctx.req.method as Dispatcher.HttpMethod, headers, body, dispatcher: agentFor(ctx, config), headersTimeout: config.timeout, bodyTimeout: config.timeout });
    answerBody = Buffer.from(await res.body.arrayBuffer());
  } catch (err) {
    traced(null);
    ctx.runtime.log?.error('azure-functions: the function could not be called', { app: config.appname, reason: err instanceof Error ? err.message : String(err) });
    return { status: 500, body: { message: 'An unexpected error occurred' } };
  }
  traced(res.statusCode);
  const answer: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) answer[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status: res.statusCode, body: answerBody, headers: answer, proxied: true };
}

/** Calls an Azure Function with the request and answers with its response (Kong's priority 749). */
export const azureFunctions = definePlugin<AzureFunctionsConfig, unknown>({
  name: 'azure-functions',
  priority: 749,
  version: '3.9.0',
  configSchema: azureFunctionsConfigSchema,
  auth: false,
  noConsumer: false,
  init: clients.init,
  access: invoke,
});
