import { hostname } from 'node:os';
import type { PluginContext, PluginRequest, PluginResponse } from '../contract';
import type { RequestTerminationConfig } from './schema';
import { perConfig } from '../shared/per-config';

/** Kong's default messages by status; other codes without a message answer an empty body. */
const DEFAULT_MESSAGES: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not found',
  405: 'Method not allowed',
  500: 'An unexpected error occurred',
  502: 'Bad Gateway',
  503: 'Service unavailable',
};

/** The response of a config without echo never changes: built once. */
const fixedResponse = perConfig((config: RequestTerminationConfig): PluginResponse => {
  let response: PluginResponse;
  if (config.body != null) {
    response = { status: config.status_code, body: config.body, headers: config.content_type != null ? { 'content-type': config.content_type } : {} };
  } else {
    const message = messageOf(config);
    response = { status: config.status_code, body: message === undefined ? null : { message } };
  }
  return response;
});

function triggered(req: PluginRequest, trigger: string): boolean {
  return req.headers[trigger.toLowerCase()] !== undefined || req.query.has(trigger);
}

function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of query) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** Kong's `kong.request.get_body()`: JSON or form bodies parsed; any other, or one that does not parse, gives none. */
function parsedBody(raw: Buffer, contentType: string | undefined): unknown {
  const type = (contentType ?? '').toLowerCase();
  try {
    if (type.startsWith('application/json')) return JSON.parse(raw.toString('utf8'));
    if (type.startsWith('application/x-www-form-urlencoded')) return queryObject(new URLSearchParams(raw.toString('utf8')));
  } catch {
    return undefined;
  }
  return undefined;
}

function messageOf(config: RequestTerminationConfig): string | undefined {
  return config.message ?? DEFAULT_MESSAGES[config.status_code];
}

async function echo(ctx: PluginContext, config: RequestTerminationConfig): Promise<PluginResponse> {
  const { req } = ctx;
  const raw = await req.readBody();
  const contentType = req.headers['content-type'];
  const host = String(req.headers.host ?? '');
  const hostPort = /:(\d+)$/.exec(host)?.[1];
  return {
    status: config.status_code,
    body: {
      message: messageOf(config),
      kong: { node_id: (ctx.runtime.nodeId as string | undefined) ?? null, worker_pid: process.pid, hostname: hostname() },
      request: {
        scheme: req.scheme,
        host: host.replace(/:\d+$/, '').toLowerCase(),
        port: req.serverPort ?? (hostPort ? Number(hostPort) : req.scheme === 'https' ? 443 : 80),
        headers: req.headers,
        query: queryObject(req.query),
        body: parsedBody(raw, Array.isArray(contentType) ? contentType[0] : contentType),
        raw_body: raw.toString('utf8'),
        method: req.method,
        path: req.path,
        uri_captures: req.uriCaptures ? { unnamed: req.uriCaptures.unnamed, named: req.uriCaptures.named } : { unnamed: [], named: {} },
      },
      matched_route: ctx.route,
      matched_service: ctx.service,
      matched_consumer: ctx.consumer,
    },
  };
}

export function requestTerminationAccess(ctx: PluginContext, config: RequestTerminationConfig): PluginResponse | void | Promise<PluginResponse> {
  if (config.trigger != null && !triggered(ctx.req, config.trigger)) return;
  if (config.echo) return echo(ctx, config);
  return fixedResponse(config);
}
