import { AggregatorRegistry } from 'prom-client';
import type { ServerStats } from '../server';
import type { MetricsJson } from './messages';

/** One worker's counts, as `/status` lists them. */
export interface WorkerReport {
  pid: number;
  stats: ServerStats;
  metrics: MetricsJson;
}

/** The counts of workers that exited, as of their last report: added to the node's so its counters never go back. */
export interface RetiredCounts {
  stats: Pick<ServerStats, 'connections_accepted' | 'connections_handled' | 'total_requests'>;
  metrics: MetricsJson[]; // their counters and histograms (gauges describe the present, and left with them)
}

/** metric types whose values only grow (prom-client's JSON `type`) */
const CUMULATIVE = new Set(['counter', 'histogram']);

/** The workers that exited, as of their last report; past a few, their metrics are summed into one. */
export class RetiredWorkers {
  readonly counts: RetiredCounts = { stats: { connections_accepted: 0, connections_handled: 0, total_requests: 0 }, metrics: [] };
  private folding = false;

  add(last: WorkerReport): void {
    const stats = this.counts.stats;
    stats.connections_accepted += last.stats.connections_accepted;
    stats.connections_handled += last.stats.connections_handled;
    stats.total_requests += last.stats.total_requests;
    this.counts.metrics.push(last.metrics.filter((m) => CUMULATIVE.has(String(m.type))));
    // a worker that keeps dying does not make the list grow: past a few, they are summed into one
    if (this.counts.metrics.length <= 8 || this.folding) return;
    this.folding = true;
    const taken = this.counts.metrics.slice();
    void AggregatorRegistry.aggregate(taken)
      .getMetricsAsJSON()
      .then(
        (sum) => (this.counts.metrics = [sum, ...this.counts.metrics.slice(taken.length)]),
        () => undefined,
      )
      .finally(() => (this.folding = false));
  }
}
