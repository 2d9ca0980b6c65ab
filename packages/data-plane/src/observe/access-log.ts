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

/** One access log line (JSON, no newline). */
export function accessLogLine(s: ExchangeSummary): string {
  const target = s.upstreamTarget;
  return JSON.stringify({
    time: new Date(s.startedAt).toISOString(),
    request_id: s.requestId,
    client_ip: s.clientIp,
    method: s.method,
    path: s.path,
    query: s.rawQuery,
    status: s.status,
    route: s.route ? (s.route.name ?? s.route.id) : null,
    service: s.service ? (s.service.name ?? s.service.id) : null,
    consumer: s.consumer ? (s.consumer.username ?? s.consumer.id) : null,
    upstream: target ? `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}` : null,
    upstream_uri: s.upstreamUri,
    source: s.source,
    latencies: s.latencies,
    bytes: { request: s.requestSize, response: s.responseSize },
    completed: s.completed,
  });
}
