import { AggregatorRegistry, type Registry } from 'prom-client';
import type { ServerStats } from '../server';
import type { MetricsSource } from '../status-server';
import type { WorkerPool } from './worker-pool';

const ZERO: ServerStats = { connections_accepted: 0, connections_active: 0, connections_handled: 0, total_requests: 0 };

/**
 * `/status` counters of a node with proxy workers: `server` summed over the workers (those that exited included, as
 * of their last report), and each live worker's own.
 */
export async function nodeCounters(pool: WorkerPool): Promise<{ server: ServerStats; workers: Array<{ pid: number } & ServerStats> }> {
  const reports = await pool.reports();
  const server = { ...ZERO, ...pool.retired.stats };
  for (const { stats } of reports) for (const key of Object.keys(ZERO) as Array<keyof ServerStats>) server[key] += stats[key];
  return { server, workers: reports.map((r) => ({ pid: r.pid, ...r.stats })).sort((a, b) => a.pid - b.pid) };
}

/**
 * `/metrics` of a node with proxy workers: the primary's own registry (node info, sync, control plane in `start`)
 * and every worker's, aggregated by prom-client's rules (sum unless a metric says otherwise); the counters and
 * histograms of workers that exited stay in, as of their last report, so the node's counters do not go back.
 */
export function nodeMetricsSource(own: Registry, pool: WorkerPool): MetricsSource {
  return {
    contentType: own.contentType,
    async metrics() {
      const [mine, reports] = await Promise.all([own.getMetricsAsJSON(), pool.reports()]);
      return AggregatorRegistry.aggregate([mine, ...pool.retired.metrics, ...reports.map((r) => r.metrics)]).metrics();
    },
  };
}
