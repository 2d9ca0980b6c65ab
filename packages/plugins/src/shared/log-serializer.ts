import type { ExchangeSummary } from '../contract';
import { setSerializeValue } from './custom-fields';

/** Request header values that never leave the gateway in a log entry. */
const REDACTED_HEADERS = new Set(['authorization', 'proxy-authorization']);

/** Kong's `querystring`: repeated arguments as arrays, arguments without `=` as `true`. */
export function queryTable(rawQuery: string): Record<string, string | boolean | Array<string | boolean>> {
  const out: Record<string, string | boolean | Array<string | boolean>> = {};
  if (rawQuery === '') return out;
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const decode = (text: string) => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
      } catch {
        return text;
      }
    };
    const name = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value: string | boolean = eq < 0 ? true : decode(pair.slice(eq + 1));
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

function requestHeaders(headers: ExchangeSummary['requestHeaders']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = REDACTED_HEADERS.has(name) ? 'REDACTED' : value;
  }
  return out;
}

function responseHeaders(headers: ExchangeSummary['responseHeaders']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = typeof value === 'number' ? String(value) : value;
  }
  return out;
}

/** One log entry in the shape of Kong's log serializer (`kong.log.serialize`), as file-log and http-log write it. */
export interface SerializedExchange {
  request: {
    id: string;
    method: string;
    uri: string;
    url: string;
    querystring: ReturnType<typeof queryTable>;
    headers: Record<string, string | string[]>;
    size: number;
  };
  response: { status: number; headers: Record<string, string | string[]>; size: number };
  upstream_uri: string;
  upstream_status: string;
  tries: Array<{ ip: string; port: number; balancer_latency: number; balancer_start: number }>;
  latencies: { kong: number; proxy: number; request: number; receive: number };
  route: unknown;
  service: unknown;
  consumer: unknown;
  authenticated_entity?: { id: string | null; consumer_id: string | null };
  client_ip: string;
  started_at: number;
  source: 'service' | 'kong';
  workspace_name: string;
  /** values plugins added (Kong's `kong.log.set_serialize_value`), correlation-id's `correlation_id` for one */
  [added: string]: unknown;
}

/**
 * Serialises a finished exchange (Kong 3.x field names; `route`, `service`, `consumer` as the entities). `custom`:
 * the plugin's `custom_fields_by_lua` values (`customFieldValues`), set last, dotted names reaching into the entry.
 */
export function serializeExchange(summary: ExchangeSummary, custom?: ReadonlyMap<string, unknown> | null): SerializedExchange {
  const uri = summary.rawQuery === '' ? summary.path : `${summary.path}?${summary.rawQuery}`;
  const entry: SerializedExchange = {
    request: {
      id: summary.requestId,
      method: summary.method,
      uri,
      url: summary.url,
      querystring: queryTable(summary.rawQuery),
      headers: requestHeaders(summary.requestHeaders),
      size: summary.requestSize,
    },
    response: { status: summary.status, headers: responseHeaders(summary.responseHeaders), size: summary.responseSize },
    upstream_uri: summary.upstreamUri ?? '',
    upstream_status: summary.source === 'service' ? String(summary.status) : '',
    tries: summary.upstreamTarget
      ? [{ ip: summary.upstreamTarget.host, port: summary.upstreamTarget.port, balancer_latency: 0, balancer_start: summary.startedAt }]
      : [],
    latencies: { kong: summary.latencies.kong, proxy: summary.latencies.proxy, request: summary.latencies.request, receive: 0 },
    route: summary.route ?? undefined,
    service: summary.service ?? undefined,
    consumer: summary.consumer ?? undefined,
    client_ip: summary.clientIp,
    started_at: summary.startedAt,
    source: summary.source,
    workspace_name: 'default',
  };
  if (summary.credential !== null) entry.authenticated_entity = { id: summary.credential.id, consumer_id: summary.credential.consumerId };
  if (summary.logValues) for (const [name, value] of summary.logValues) entry[name] = value;
  if (custom) for (const [key, value] of custom) setSerializeValue(entry, key, value);
  return entry;
}
