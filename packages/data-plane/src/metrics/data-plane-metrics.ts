import type { QueueStats } from '@gatehouse/plugins';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CompiledConfig } from '../compile/types';
import type { ConfigHolder } from '../config-holder';
import type { ServerStats } from '../server';
import type { StreamStats } from '../stream/stream-counters';
import { ExchangeMetrics } from './exchange-metrics';
import { TARGET_HEALTH_STATES, UpstreamHealthRegistry } from './upstream-health';

export interface DataPlaneMetricsOptions {
  registry: Registry;
  /** the node id label of Kong's connection metrics */
  nodeId: string;
  holder: ConfigHolder;
  /** the node's plugin queues (`PluginRuntime.queues`), counted per queue in `gatehouse_log_queue_*` */
  queues?: { stats(): QueueStats[] };
}

/** Whether some enabled `prometheus` configuration of the served config asks for upstream health series. */
function wantsUpstreamHealth(config: CompiledConfig): boolean {
  for (const route of config.routes) {
    for (const step of route.logChain) {
      if (step.plugin.name !== 'prometheus') continue;
      if (step.base?.config?.upstream_health_metrics === true) return true;
      if (step.byConsumer) for (const instance of step.byConsumer.values()) if (instance.config?.upstream_health_metrics === true) return true;
    }
  }
  return false;
}

/**
 * A data plane's metrics in the node's registry: Kong's connection and request counts, upstream target health, the
 * per-request series the `prometheus` plugin records (`exchange`), and ours (configuration served, apply time,
 * log queues, access log).
 */
export class DataPlaneMetrics {
  readonly exchange: ExchangeMetrics;
  readonly upstreamHealth = new UpstreamHealthRegistry();
  private stats: (() => ServerStats) | null = null;
  private streamStats: (() => StreamStats) | null = null;
  private accessLogDropped: (() => number) | null = null;
  private readonly applyDuration: Gauge;
  private readonly appliedAt: Gauge;
  private readonly applyFailures: Counter;
  private exportHealth = false;

  constructor(options: DataPlaneMetricsOptions) {
    const { registry, nodeId, holder } = options;
    this.exchange = new ExchangeMetrics(registry);
    this.exportHealth = wantsUpstreamHealth(holder.current);
    holder.onSwap((next) => (this.exportHealth = wantsUpstreamHealth(next)));

    // collect() runs with the metric as `this`: the node's state is read through these
    const serverStats = () => this.stats?.();
    const streamStats = () => this.streamStats?.();
    const healthWanted = () => this.exportHealth;
    const healthReports = () => this.upstreamHealth.reports();
    const accessLogDropped = () => this.accessLogDropped?.() ?? 0;
    new Gauge({
      name: 'kong_nginx_connections_total',
      help: 'Number of connections by subsystem',
      labelNames: ['node_id', 'subsystem', 'state'],
      registers: [registry],
      collect() {
        for (const [subsystem, s] of [['http', serverStats()], ['stream', streamStats()]] as const) {
          if (!s) continue;
          const set = (state: string, value: number) => this.set({ node_id: nodeId, subsystem, state }, value);
          set('accepted', s.connections_accepted);
          set('handled', s.connections_handled);
          set('total', s.total_requests);
          set('active', s.connections_active);
          set('reading', 0);
          // a stream connection is always relaying; an HTTP one waits between requests
          set('writing', subsystem === 'stream' ? s.connections_active : s.connections_active > 0 ? 1 : 0);
          set('waiting', subsystem === 'stream' ? 0 : Math.max(0, s.connections_active - 1));
        }
      },
    });
    new Gauge({
      name: 'kong_nginx_requests_total',
      help: 'Number of requests total',
      labelNames: ['node_id', 'subsystem'],
      registers: [registry],
      collect() {
        const s = serverStats();
        if (s) this.set({ node_id: nodeId, subsystem: 'http' }, s.total_requests);
        const stream = streamStats();
        if (stream) this.set({ node_id: nodeId, subsystem: 'stream' }, stream.total_requests);
      },
    });
    new Gauge({
      name: 'kong_upstream_target_health',
      help: 'Health status of targets of upstream. States = healthchecks_off|healthy|unhealthy|dns_error, value is 1 when state is populated.',
      labelNames: ['upstream', 'target', 'address', 'state', 'subsystem'],
      registers: [registry],
      // every proxy worker mirrors the node's health: the same value in each
      aggregator: 'max',
      collect() {
        this.reset();
        if (!healthWanted()) return;
        for (const r of healthReports()) {
          for (const state of TARGET_HEALTH_STATES) this.set({ upstream: r.upstream, target: r.target, address: r.address, state, subsystem: 'http' }, r.state === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'gatehouse_data_plane_config_version',
      help: 'Configuration version this data plane serves (0 before any)',
      registers: [registry],
      // across proxy workers: the oldest version any of them serves
      aggregator: 'min',
      collect() {
        this.set(holder.loaded ? holder.current.version : 0);
      },
    });
    this.appliedAt = new Gauge({ name: 'gatehouse_data_plane_config_applied_timestamp_seconds', help: 'When this data plane last applied a configuration (epoch seconds)', registers: [registry], aggregator: 'max' });
    this.applyDuration = new Gauge({ name: 'gatehouse_data_plane_config_apply_duration_seconds', help: 'How long the last configuration took to verify, compile and swap in', registers: [registry], aggregator: 'max' });
    this.applyFailures = new Counter({ name: 'gatehouse_data_plane_config_apply_failures_total', help: 'Configurations this data plane refused or failed to apply', registers: [registry] });
    const queueGauge = (name: string, help: string, pick: (s: QueueStats) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['plugin_id'],
        registers: [registry],
        collect() {
          this.reset();
          for (const s of options.queues?.stats() ?? []) this.set({ plugin_id: s.owner }, pick(s));
        },
      });
    queueGauge('gatehouse_log_queue_entries', 'Entries waiting in a logging plugin queue', (s) => s.entries);
    queueGauge('gatehouse_log_queue_dropped_total', 'Entries a logging plugin queue dropped because it was full', (s) => s.dropped);
    queueGauge('gatehouse_log_queue_failed_total', 'Entries a logging plugin queue gave up after retrying', (s) => s.failed);
    queueGauge('gatehouse_log_queue_sent_total', 'Entries a logging plugin queue delivered', (s) => s.sent);
    new Gauge({
      name: 'gatehouse_access_log_dropped_total',
      help: 'Access log lines dropped because the destination fell behind',
      registers: [registry],
      collect() {
        this.set(accessLogDropped());
      },
    });
  }

  /** the proxy whose connection and request counts are exported */
  observeServer(stats: () => ServerStats): void {
    this.stats = stats;
  }

  /** the stream proxy whose connections are exported with `subsystem="stream"` */
  observeStream(stats: () => StreamStats): void {
    this.streamStats = stats;
  }

  observeAccessLog(dropped: () => number): void {
    this.accessLogDropped = dropped;
  }

  /** a configuration was applied: when, and how long verify + compile + swap took */
  configApplied(durationMs: number): void {
    this.appliedAt.set(Math.floor(Date.now() / 1000));
    this.applyDuration.set(durationMs / 1000);
  }

  configRefused(): void {
    this.applyFailures.inc();
  }
}
