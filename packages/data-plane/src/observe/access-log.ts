import { AppendLog } from '@gatehouse/plugins';
import type { ExchangeSummary } from '@gatehouse/plugins';

/** lines wait at most this long (ms) to be written together… */
const FLUSH_DELAY_MS = 50;
/** …or until this many bytes wait */
const FLUSH_BYTES = 64 * 1024;

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
    this.out = new AppendLog(destination, { onError, flushDelayMs: FLUSH_DELAY_MS, flushBytes: FLUSH_BYTES });
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

/** No character of `s` needs escaping in JSON (control characters, `"`, `\\`, surrogates). */
function plainJson(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** A JSON string, or null. Most values (addresses, names, paths) need no escaping and are only quoted. */
const str = (value: string | null | undefined): string => (value == null ? 'null' : plainJson(value) ? `"${value}"` : JSON.stringify(value));

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
