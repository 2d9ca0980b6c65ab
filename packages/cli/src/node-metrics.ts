import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { RedisClient } from '@gatehouse/sync';

export interface NodeMetrics {
  /** where this process's metrics are registered */
  registry: Registry;
  /**
   * what `/metrics` serves: `registry`, or, once a data plane with proxy workers is running, the node's metrics
   * aggregated over the primary and its workers
   */
  exposed: Registry;
  /** makes `exposed` serve the node's metrics from `source` (a data plane's primary and its workers) */
  aggregateWith(source: Pick<Registry, 'metrics'>): void;
  /** Redis connections whose state `gatehouse_redis_reachable` reports */
  watchRedis(client: RedisClient): void;
}

/**
 * The one metrics registry of a `gatehouse` process: both planes of `start` register into it, so every `/metrics`
 * of the process shows the whole node. Holds what belongs to the node itself: Kong's `kong_node_info`, Node's process
 * metrics (prom-client defaults, prefixed `gatehouse_`) and Redis reachability.
 */
export function createNodeMetrics(nodeId: string, version: string): NodeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  const info = new Gauge({ name: 'kong_node_info', help: 'Kong Node metadata information', labelNames: ['node_id', 'version'], registers: [registry] });
  info.set({ node_id: nodeId, version }, 1);
  const clients = new Set<RedisClient>();
  // registered with the first Redis connection: a node without Redis has no such series
  const reachable = () =>
    new Gauge({
      name: 'gatehouse_redis_reachable',
      help: 'Whether every Redis connection of this node is ready (1) or not (0)',
      registers: [registry],
      collect() {
        let ready = true;
        for (const client of clients) if (client.status !== 'ready') ready = false;
        this.set(ready ? 1 : 0);
      },
    });
  let aggregated: Pick<Registry, 'metrics'> | null = null;
  // the registry itself for everything else (contentType, …); only the text it serves changes
  const exposed = Object.create(registry, { metrics: { value: () => (aggregated ?? registry).metrics() } }) as Registry;
  return {
    registry,
    exposed,
    aggregateWith: (source) => void (aggregated = source),
    watchRedis: (client) => {
      if (clients.size === 0) reachable();
      clients.add(client);
    },
  };
}
