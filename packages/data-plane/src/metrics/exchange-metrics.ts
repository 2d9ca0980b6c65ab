import type { Route, Service } from '@gatehouse/core';
import type { ExchangeMetricsSink, ExchangeSummary, StreamSessionSummary } from '@gatehouse/plugins';
import type { Registry } from 'prom-client';
import { CellCounter, CellHistogram, CounterCell, HistogramCell } from './cells';
import { AiMetrics } from './ai-metrics';
import { StreamMetrics } from './stream-metrics';

/** Kong's buckets (prometheus plugin, 3.x): gateway latency, and upstream / whole-request latency. */
export const KONG_LATENCY_BUCKETS = [1, 2, 5, 7, 10, 15, 20, 30, 50, 75, 100, 200, 500, 750, 1000];
export const UPSTREAM_LATENCY_BUCKETS = [25, 50, 80, 100, 250, 400, 700, 1000, 2000, 5000, 10000, 30000, 60000];

const WORKSPACE = 'default';

/** Every series of one (service, route) label pair; lives as long as the process, across snapshots. */
class RouteSeries {
  readonly kongLatency: HistogramCell;
  readonly upstreamLatency: HistogramCell;
  readonly requestLatency: HistogramCell;
  /** status → consumer → cell, one map per source ('service', 'kong') */
  readonly fromService = new Map<number, Map<string, CounterCell>>();
  readonly fromKong = new Map<number, Map<string, CounterCell>>();
  /** consumer → [ingress, egress] */
  readonly bandwidth = new Map<string, [CounterCell, CounterCell]>();

  constructor(
    readonly service: string,
    readonly route: string,
  ) {
    const labels = { service, route, workspace: WORKSPACE };
    this.kongLatency = new HistogramCell(labels, KONG_LATENCY_BUCKETS);
    this.upstreamLatency = new HistogramCell(labels, UPSTREAM_LATENCY_BUCKETS);
    this.requestLatency = new HistogramCell(labels, UPSTREAM_LATENCY_BUCKETS);
  }

  status(code: number, source: 'service' | 'kong', consumer: string): CounterCell {
    const bySource = source === 'service' ? this.fromService : this.fromKong;
    let byConsumer = bySource.get(code);
    if (byConsumer === undefined) bySource.set(code, (byConsumer = new Map()));
    let cell = byConsumer.get(consumer);
    if (cell === undefined) {
      cell = new CounterCell({ service: this.service, route: this.route, code: String(code), source, workspace: WORKSPACE, consumer });
      byConsumer.set(consumer, cell);
    }
    return cell;
  }

  bytes(consumer: string): [CounterCell, CounterCell] {
    let pair = this.bandwidth.get(consumer);
    if (pair === undefined) {
      const labels = (direction: string) => ({ service: this.service, route: this.route, direction, workspace: WORKSPACE, consumer });
      pair = [new CounterCell(labels('ingress')), new CounterCell(labels('egress'))];
      this.bandwidth.set(consumer, pair);
    }
    return pair;
  }
}

/**
 * Kong's per-request series (`kong_http_requests_total`, `kong_kong_latency_ms`, `kong_upstream_latency_ms`,
 * `kong_request_latency_ms`, `kong_bandwidth_bytes`), recorded for the routes where the `prometheus` plugin applies.
 * A route object (one per snapshot) is resolved to its label pair once; series themselves outlive snapshots, so
 * counters never go back when the configuration changes.
 */
export class ExchangeMetrics implements ExchangeMetricsSink {
  private readonly byLabels = new Map<string, RouteSeries>();
  private readonly byRoute = new WeakMap<Route, RouteSeries>();
  private readonly byService = new WeakMap<Service, RouteSeries>();
  private readonly ai: AiMetrics;
  private readonly streams: StreamMetrics;

  constructor(registry: Registry) {
    this.ai = new AiMetrics(registry);
    this.streams = new StreamMetrics(registry);
    const all = () => this.byLabels.values();
    const histogram = (name: string, help: string, buckets: number[], pick: (s: RouteSeries) => HistogramCell) =>
      new CellHistogram({ name, help, labelNames: ['service', 'route', 'workspace'], buckets, registers: [registry] }, function* () {
        for (const s of all()) if (pick(s).count > 0) yield pick(s);
      });
    new CellCounter(
      { name: 'kong_http_requests_total', help: 'HTTP status codes per consumer/service/route in Kong', labelNames: ['service', 'route', 'code', 'source', 'workspace', 'consumer'], registers: [registry] },
      function* () {
        for (const s of all()) {
          for (const byConsumer of s.fromService.values()) yield* byConsumer.values();
          for (const byConsumer of s.fromKong.values()) yield* byConsumer.values();
        }
      },
    );
    histogram('kong_kong_latency_ms', 'Latency added by Kong and enabled plugins for each service/route in Kong', KONG_LATENCY_BUCKETS, (s) => s.kongLatency);
    histogram('kong_upstream_latency_ms', 'Latency added by upstream response for each service/route in Kong', UPSTREAM_LATENCY_BUCKETS, (s) => s.upstreamLatency);
    histogram('kong_request_latency_ms', 'Total latency incurred during requests for each service/route in Kong', UPSTREAM_LATENCY_BUCKETS, (s) => s.requestLatency);
    new CellCounter(
      { name: 'kong_bandwidth_bytes', help: 'Total bandwidth (ingress/egress) throughput in bytes', labelNames: ['service', 'route', 'direction', 'workspace', 'consumer'], registers: [registry] },
      function* () {
        for (const s of all()) for (const [ingress, egress] of s.bandwidth.values()) {
          if (ingress.value > 0) yield ingress;
          if (egress.value > 0) yield egress;
        }
      },
    );
  }

  private seriesFor(route: Route | null, service: Service): RouteSeries {
    const cached = route !== null ? this.byRoute.get(route) : this.byService.get(service);
    if (cached !== undefined) return cached;
    // Kong's labels: the service's name (else its host), the route's name (else its id)
    const serviceLabel = service.name ?? service.host;
    const routeLabel = route === null ? '' : (route.name ?? route.id);
    const key = `${serviceLabel}\u0000${routeLabel}`;
    let series = this.byLabels.get(key);
    if (series === undefined) this.byLabels.set(key, (series = new RouteSeries(serviceLabel, routeLabel)));
    if (route !== null) this.byRoute.set(route, series);
    else this.byService.set(service, series);
    return series;
  }

  recordSession(session: StreamSessionSummary, flags: { status_code_metrics: boolean; latency_metrics: boolean }): void {
    this.streams.record(session, flags);
  }

  record(s: ExchangeSummary, flags: { per_consumer: boolean; status_code_metrics: boolean; latency_metrics: boolean; bandwidth_metrics: boolean; ai_metrics?: boolean }): void {
    // as Kong: nothing is recorded for a request without a service
    if (s.service === null) return;
    if (flags.ai_metrics === true && s.logValues) this.ai.record(s.logValues.get('ai'));
    const series = this.seriesFor(s.route, s.service);
    const consumer = flags.per_consumer && s.consumer !== null ? (s.consumer.username ?? s.consumer.id) : '';
    if (flags.status_code_metrics) series.status(s.status, s.source, consumer).value++;
    if (flags.latency_metrics) {
      const l = s.latencies;
      if (l.request >= 0) series.requestLatency.observe(l.request);
      if (l.proxy >= 0) series.upstreamLatency.observe(l.proxy);
      if (l.kong >= 0) series.kongLatency.observe(l.kong);
    }
    if (flags.bandwidth_metrics) {
      const [ingress, egress] = series.bytes(consumer);
      if (s.requestSize > 0) ingress.value += s.requestSize;
      if (s.responseSize > 0) egress.value += s.responseSize;
    }
  }
}
