import { AppendLog } from '@gatehouse/plugins';
import type { ExchangeSummary } from '@gatehouse/plugins';

/** lines wait at most this long (ms) to be written together… */
const FLUSH_DELAY_MS = 50;
/**
 * …or until this many bytes wait. Each batch is a trip to a libuv thread and back, which costs the proxy more than
 * the bytes do: at 25,000 requests a second a batch goes out every 50 ms either way, about 20 a second, not 170.
 */
const FLUSH_BYTES = 512 * 1024;

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
    this.out = new AppendLog(destination, { onError, flushDelayMs: FLUSH_DELAY_MS, flushBytes: FLUSH_BYTES, asciiLines: true });
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

let isoSecond = -1;
/** `2026-01-02T03:04:05.` of the second last formatted */
let isoPrefix = '';
/** the same, after the first key of a line */
let lineHead = '';

/** `000` to `999` */
const MILLIS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** `2026-01-02T03:04:05.` of the second of an epoch millisecond: formatted once a second */
function isoSecondOf(second: number): string {
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    lineHead = `{"time":"${isoPrefix}`;
  }
  return isoPrefix;
}

/** ISO time of an epoch millisecond (`…T03:04:05.678Z`); the date and time up to the second are formatted once a second. */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  const milli = ms - second * 1000;
  return `${isoSecondOf(second)}${MILLIS[milli] ?? (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli}Z`;
}

/** `{"time":"…Z"` of a line */
function timeField(ms: number): string {
  const second = Math.floor(ms / 1000);
  const milli = ms - second * 1000;
  isoSecondOf(second);
  const digits = MILLIS[milli];
  return digits !== undefined ? `${lineHead}${digits}Z"` : `{"time":"${isoTime(ms)}"`;
}

/** `s` is printable ASCII without `"` and `\\`: it goes into a line as it is, between quotes. */
function plainJson(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** `\u00e9` of one UTF-16 unit */
const unicodeEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A JSON string, or null. Most values (addresses, names, paths) need no escaping and are only quoted. Everything
 * outside ASCII is escaped too (`\u00e9`, a pair of escapes beyond the BMP), so every line is ASCII and is copied
 * into the log byte for byte.
 */
const str = (value: string | null | undefined): string =>
  value == null ? 'null' : plainJson(value) ? `"${value}"` : JSON.stringify(value).replace(/[\u0080-\uffff]/g, unicodeEscape);

/** the quoted label of a route, service or consumer: worked out once per entity object (one per snapshot) */
const labels = new WeakMap<object, string>();

function labelOf<T extends object>(entity: T | null, label: (e: T) => string): string {
  if (entity === null) return 'null';
  let quoted = labels.get(entity);
  if (quoted === undefined) labels.set(entity, (quoted = str(label(entity))));
  return quoted;
}

const routeLabel = (r: NonNullable<ExchangeSummary['route']>) => r.name ?? r.id;
const serviceLabel = (s: NonNullable<ExchangeSummary['service']>) => s.name ?? s.id;
const consumerLabel = (c: NonNullable<ExchangeSummary['consumer']>) => c.username ?? c.id;

/** `"host:port"` of the upstream target (IPv6 in brackets) */
const upstreamText = (target: NonNullable<ExchangeSummary['upstreamTarget']>) => str(`${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`);

/** `,"route":…,"service":…,"consumer":…,"upstream":…` of one combination of entities and upstream target */
interface Entities {
  service: ExchangeSummary['service'];
  consumer: ExchangeSummary['consumer'];
  host: string | null;
  port: number;
  text: string;
}

/** the entities part of the last line of each route (or of lines without a route): most lines repeat the one before */
const lastEntities = new WeakMap<object, Entities>();
const NO_ROUTE = {};

function entitiesOf(s: ExchangeSummary): string {
  const key = s.route ?? NO_ROUTE;
  const target = s.upstreamTarget;
  const host = target === null ? null : target.host;
  const port = target === null ? -1 : target.port;
  const last = lastEntities.get(key);
  if (last !== undefined && last.service === s.service && last.consumer === s.consumer && last.host === host && last.port === port) return last.text;
  const text =
    `,"route":${labelOf(s.route, routeLabel)},"service":${labelOf(s.service, serviceLabel)}` +
    `,"consumer":${labelOf(s.consumer, consumerLabel)},"upstream":${target === null ? 'null' : upstreamText(target)}`;
  lastEntities.set(key, { service: s.service, consumer: s.consumer, host, port, text });
  return text;
}

/** what follows the upstream URI, up to the first latency, by source */
const SOURCE_SERVICE = ',"source":"service","latencies":{"kong":';
const SOURCE_KONG = ',"source":"kong","latencies":{"kong":';

/**
 * One access log line (JSON, no newline). Written out field by field: it runs once per request, and a generic
 * JSON.stringify of a nested object costs several times more. What repeats from line to line (the time up to the
 * second, the labels of the entities and the upstream, the keys around a few known values) is put together once.
 */
export function accessLogLine(s: ExchangeSummary): string {
  const l = s.latencies;
  return (
    // an address (checked by isIP when it comes from X-Forwarded-For) and a method (HTTP token characters) need no escaping
    `${timeField(s.startedAt)},"request_id":"${s.requestId}","client_ip":"${s.clientIp}","method":"${s.method}"` +
    `,"path":${str(s.path)},"query":${str(s.rawQuery)},"status":${s.status}${entitiesOf(s)},"upstream_uri":${str(s.upstreamUri)}` +
    `${s.source === 'service' ? SOURCE_SERVICE : s.source === 'kong' ? SOURCE_KONG : `,"source":"${s.source}","latencies":{"kong":`}${l.kong},"proxy":${l.proxy},"request":${l.request}}` +
    `,"bytes":{"request":${s.requestSize},"response":${s.responseSize}${s.completed ? '},"completed":true}' : '},"completed":false}'}`
  );
}
