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

/**
 * What the end-of-exchange observers receive: built once per finished exchange, only when someone observes it. A
 * class, so that what only some observers read (the URL, the request size, the response head) is worked out on the
 * prototype when read, with nothing allocated for it per request.
 */
class Summary implements ExchangeSummary {
  readonly requestId: string;
  readonly startedAt: number;
  readonly clientIp: string;
  readonly method: string;
  readonly requestHeaders: ExchangeSummary['requestHeaders'];
  readonly status: number;
  readonly responseSize: number;
  readonly source: ExchangeSummary['source'];
  readonly latencies: ExchangeSummary['latencies'];
  readonly route: ExchangeSummary['route'];
  readonly service: ExchangeSummary['service'];
  readonly consumer: ExchangeSummary['consumer'];
  readonly credential: ExchangeSummary['credential'];
  readonly upstreamUri: string | null;
  readonly upstreamTarget: ExchangeSummary['upstreamTarget'];
  readonly completed: boolean;
  readonly logValues: ReadonlyMap<string, unknown> | null;
  /** the request size once read (the prometheus plugin and the access log both read it) */
  private requestBytes = -1;

  constructor(
    private readonly trace: ExchangeTrace,
    private readonly res: ServerResponse,
    private readonly ex: Exchange | null,
    readonly path: string,
    readonly rawQuery: string,
  ) {
    const req = trace.req;
    const request = millis(trace.startedAt, performance.now());
    const written = req.socket?.bytesWritten ?? trace.writtenBefore;
    this.requestId = trace.requestId;
    this.startedAt = trace.startedAtEpoch;
    this.clientIp = ex?.clientIp ?? req.socket?.remoteAddress ?? '';
    this.method = req.method ?? 'GET';
    this.requestHeaders = req.headers;
    this.status = res.statusCode;
    this.responseSize = Math.max(0, written - trace.writtenBefore);
    this.source = trace.fromUpstream ? 'service' : 'kong';
    this.latencies =
      trace.sentAt >= 0
        ? { kong: millis(trace.startedAt, trace.sentAt), proxy: trace.headersAt >= 0 ? millis(trace.sentAt, trace.headersAt) : -1, request }
        : { kong: request, proxy: -1, request };
    this.route = ex?.route ?? null;
    this.service = ex?.service ?? null;
    this.consumer = ex?.consumer ?? null;
    this.credential = ex?.credential ?? null;
    this.upstreamUri = trace.upstreamUri;
    this.upstreamTarget = trace.upstreamTarget ? { host: trace.upstreamTarget.host, port: trace.upstreamTarget.port } : null;
    this.completed = res.writableFinished;
    this.logValues = ex?.logValueMap ?? null;
  }

  get url(): string {
    const req = this.trace.req;
    return `${this.ex?.scheme ?? 'http'}://${req.headers.host ?? ''}${req.url ?? '/'}`;
  }

  get requestSize(): number {
    if (this.requestBytes < 0) this.requestBytes = headBytes(this.trace.req) + bodyBytes(this.trace.req, this.ex);
    return this.requestBytes;
  }

  get responseHeaders(): ExchangeSummary['responseHeaders'] {
    return this.trace.responseHeaderList !== null ? headerRecord(this.trace.responseHeaderList) : this.res.getHeaders();
  }
}

export function summarize(trace: ExchangeTrace, res: ServerResponse, ex: Exchange | null, path: string, rawQuery: string): ExchangeSummary {
  return new Summary(trace, res, ex, path, rawQuery);
}
