import { AppendLog } from '@gatehouse/plugins';
import type { ExchangeSummary } from '@gatehouse/plugins';

/**
 * The proxy's access log: one JSON line per request, written through a buffered asynchronous writer (never on the
 * request path). `reopen()` lets go of the file so a rotated one is started (SIGUSR1).
 */
export class AccessLog {
  private readonly out: AppendLog;

  constructor(
    /** a file path, or `stdout` */
    destination: string,
    onError?: (err: Error) => void,
  ) {
    this.out = new AppendLog(destination, { onError });
  }

  get dropped(): number {
    return this.out.dropped;
  }

  get written(): number {
    return this.out.written;
  }

  write(s: ExchangeSummary): void {
    this.out.write(accessLogLine(s));
  }

  reopen(): void {
    this.out.reopen();
  }

  drained(): Promise<void> {
    return this.out.drained();
  }

  close(): Promise<void> {
    return this.out.close();
  }
}

let isoMs = -1;
let isoText = '';

/** ISO time of an epoch millisecond; consecutive lines of the same millisecond share one conversion. */
function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** A JSON string, or null. */
const str = (value: string | null | undefined): string => (value == null ? 'null' : JSON.stringify(value));

/**
 * One access log line (JSON, no newline). Written out field by field: it runs once per request, and a generic
 * JSON.stringify of a nested object costs several times more.
 */
export function accessLogLine(s: ExchangeSummary): string {
  const target = s.upstreamTarget;
  const upstream = target ? `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}` : null;
  const l = s.latencies;
  return (
    `{"time":"${isoTime(s.startedAt)}","request_id":"${s.requestId}","client_ip":${str(s.clientIp)},"method":${str(s.method)}` +
    `,"path":${str(s.path)},"query":${str(s.rawQuery)},"status":${s.status}` +
    `,"route":${str(s.route ? (s.route.name ?? s.route.id) : null)},"service":${str(s.service ? (s.service.name ?? s.service.id) : null)}` +
    `,"consumer":${str(s.consumer ? (s.consumer.username ?? s.consumer.id) : null)},"upstream":${str(upstream)},"upstream_uri":${str(s.upstreamUri)}` +
    `,"source":"${s.source}","latencies":{"kong":${l.kong},"proxy":${l.proxy},"request":${l.request}}` +
    `,"bytes":{"request":${s.requestSize},"response":${s.responseSize}},"completed":${s.completed}}`
  );
}
