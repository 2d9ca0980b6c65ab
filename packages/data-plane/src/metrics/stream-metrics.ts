import type { StreamSessionSummary } from '@gatehouse/plugins';
import type { Registry } from 'prom-client';
import { CellCounter, CellHistogram, CounterCell, HistogramCell } from './cells';

const WORKSPACE = 'default';
/** Kong's buckets for `kong_session_duration_ms` (its upstream latency buckets) */
const SESSION_BUCKETS = [25, 50, 80, 100, 250, 400, 700, 1000, 2000, 5000, 10000, 30000, 60000];

/** The series of one (service, route) label pair in the stream subsystem. */
class SessionSeries {
  readonly duration: HistogramCell;
  /** `${code}|${source}` → cell */
  readonly statuses = new Map<string, CounterCell>();

  constructor(
    readonly service: string,
    readonly route: string,
  ) {
    this.duration = new HistogramCell({ service, route, workspace: WORKSPACE }, SESSION_BUCKETS);
  }

  status(code: number, source: string): CounterCell {
    const key = `${code}|${source}`;
    let cell = this.statuses.get(key);
    if (cell === undefined) this.statuses.set(key, (cell = new CounterCell({ service: this.service, route: this.route, code: String(code), source, workspace: WORKSPACE })));
    return cell;
  }
}

/**
 * Kong's stream series of the prometheus plugin (its exporter in the stream subsystem): `kong_stream_sessions_total`
 * by status and source, and `kong_session_duration_ms`, for the stream routes where the plugin applies.
 */
export class StreamMetrics {
  private readonly byLabels = new Map<string, SessionSeries>();

  constructor(registry: Registry) {
    const all = () => this.byLabels.values();
    new CellCounter(
      { name: 'kong_stream_sessions_total', help: 'Stream status codes per service/route in Kong', labelNames: ['service', 'route', 'code', 'source', 'workspace'], registers: [registry] },
      function* () {
        for (const s of all()) yield* s.statuses.values();
      },
    );
    new CellHistogram(
      { name: 'kong_session_duration_ms', help: 'latency incurred in stream session for each service/route in Kong', labelNames: ['service', 'route', 'workspace'], buckets: SESSION_BUCKETS, registers: [registry] },
      function* () {
        for (const s of all()) if (s.duration.count > 0) yield s.duration;
      },
    );
  }

  record(session: StreamSessionSummary, flags: { status_code_metrics: boolean; latency_metrics: boolean }): void {
    // as Kong: nothing is recorded for a session without a service or a route
    if (session.service === null || session.route === null) return;
    const service = session.service.name ?? session.service.host;
    const route = session.route.name ?? session.route.id;
    const key = `${service}\u0000${route}`;
    let series = this.byLabels.get(key);
    if (series === undefined) this.byLabels.set(key, (series = new SessionSeries(service, route)));
    // `service` once the session was handed to the balancer, `kong` when the gateway ended it first
    if (flags.status_code_metrics) series.status(session.status, session.upstreamTarget !== null ? 'service' : 'kong').value++;
    if (flags.latency_metrics) series.duration.observe(session.latencies.session);
  }
}
