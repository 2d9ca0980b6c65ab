import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Redis } from 'ioredis';

export interface NodeMetrics {
  registry: Registry;
  /** Redis connections whose state `gatehouse_redis_reachable` reports */
  watchRedis(client: Redis): void;
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
  const clients = new Set<Redis>();
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
  return {
    registry,
    watchRedis: (client) => {
      if (clients.size === 0) reachable();
      clients.add(client);
    },
  };
}
