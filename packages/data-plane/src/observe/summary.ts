import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExchangeSummary } from '@gatehouse/plugins';
import type { Exchange } from '../pipeline/exchange';
import { millis, type ExchangeTrace } from './exchange-trace';

/**
 * Bytes of a request head as the client sent it (request line, headers, blank line). Node reads header bytes as
 * latin1, one character per byte, so string lengths are byte counts.
 */
function headBytes(req: IncomingMessage): number {
  let bytes = (req.method ?? 'GET').length + 1 + (req.url ?? '/').length + 1 + 8 + 2 + 2;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) bytes += raw[i]!.length + 2 + raw[i + 1]!.length + 2;
  return bytes;
}

function bodyBytes(req: IncomingMessage, ex: Exchange | null): number {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) || 0;
  return ex?.body?.length ?? 0;
}

function headerRecord(list: string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!.toLowerCase();
    const value = list[i + 1]!;
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** What the end-of-exchange observers receive; built once per finished exchange, only when someone observes it. */
export function summarize(trace: ExchangeTrace, res: ServerResponse, ex: Exchange | null, path: string, rawQuery: string): ExchangeSummary {
  const req = trace.req;
  const end = performance.now();
  const request = millis(trace.startedAt, end);
  const proxied = trace.sentAt >= 0;
  const written = req.socket?.bytesWritten ?? trace.writtenBefore;
  return {
    requestId: trace.requestId,
    startedAt: trace.startedAtEpoch,
    clientIp: ex?.clientIp ?? req.socket?.remoteAddress ?? '',
    method: req.method ?? 'GET',
    // what only some observers read is worked out when read
    get url() {
      return `${ex?.scheme ?? 'http'}://${req.headers.host ?? ''}${req.url ?? '/'}`;
    },
    path,
    rawQuery,
    requestHeaders: req.headers,
    get requestSize() {
      return headBytes(req) + bodyBytes(req, ex);
    },
    status: res.statusCode,
    // only the logging plugins read the response head: built when asked
    get responseHeaders() {
      return trace.responseHeaderList !== null ? headerRecord(trace.responseHeaderList) : res.getHeaders();
    },
    responseSize: Math.max(0, written - trace.writtenBefore),
    source: trace.fromUpstream ? 'service' : 'kong',
    latencies: proxied
      ? { kong: millis(trace.startedAt, trace.sentAt), proxy: trace.headersAt >= 0 ? millis(trace.sentAt, trace.headersAt) : -1, request }
      : { kong: request, proxy: -1, request },
    route: ex?.route ?? null,
    service: ex?.service ?? null,
    consumer: ex?.consumer ?? null,
    credential: ex?.credential ?? null,
    upstreamUri: trace.upstreamUri,
    upstreamTarget: trace.upstreamTarget ? { host: trace.upstreamTarget.host, port: trace.upstreamTarget.port } : null,
    completed: res.writableFinished,
  };
}
