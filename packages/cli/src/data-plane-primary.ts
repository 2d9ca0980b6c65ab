import {
  BalancerRegistry,
  createStatusServer,
  DataPlaneNode,
  nodeCounters,
  nodeMetricsSource,
  selfSignedDefault,
  SharedCallServer,
  serveNodeStores,
  SystemResolver,
  WorkerPool,
} from '@gatehouse/data-plane';
import { LocalCounters, MemoryCacheStore, PROXY_CACHE_MEMORY_BYTES, type PluginRuntime } from '@gatehouse/plugins';
import type { ConfigBus, HealthChannel } from '@gatehouse/sync';
import { Counter, Registry } from 'prom-client';
import type { RunningDataPlane } from './data-plane-node';
import { followRuntimeLogLevel, type Logger } from './logger';
import { busFeedOf, startHealthReporter, subscribeCachePurges } from './proxy-config';
import type { NodeMetrics } from './node-metrics';
import type { Settings } from './settings';

/**
 * Marks a process the primary forked as a proxy worker (main.ts runs `runProxyWorker` in it); its value is the
 * primary's role, so the worker reads the same settings (listen defaults differ between `start` and `data-plane`).
 */
export const PROXY_WORKER_ENV = 'GATEHOUSE_PROXY_WORKER';
/** Tells a proxy worker that the node's oauth2 tokens live in the primary (embedded mode without Redis). */
export const WORKER_SHARED_TOKENS_ENV = 'GATEHOUSE_WORKER_SHARED_TOKENS';

/**
 * A data plane with `settings.workers` proxy workers. This process (the primary) follows the bus: one snapshot fetch,
 * one signature check, one compile (to refuse a bad config and to drive the health checks) and one disk-cache write
 * per node, then forwards the verified snapshot to every worker. It also holds what Kong keeps per node: the local
 * rate-limit counters, the memory proxy-cache, the oauth2 tokens of the embedded mode, the balancers' health (active
 * checks run here once, passive results from every worker are counted here) and the status listener, which sums the
 * workers' counters and aggregates their metrics.
 */
export async function startDataPlanePrimary(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  id: string,
  extraRuntime: PluginRuntime,
  health: HealthChannel | null,
  nodeMetrics?: NodeMetrics,
): Promise<RunningDataPlane> {
  const registry = nodeMetrics?.registry ?? new Registry();
  // the primary refuses a bad config before any worker sees it; workers count the same series (0), summed
  const refused = new Counter({ name: 'gatehouse_data_plane_config_apply_failures_total', help: 'Configurations this data plane refused or failed to apply', registers: [registry] });
  const { shared, purges, tokens } = nodeStores(settings, extraRuntime, log);
  if (purges) nodeMetrics?.watchRedis(purges);

  const balancers = new BalancerRegistry({ resolver: new SystemResolver(settings.dnsResolver, settings.dnsOrder) });
  const pool = new WorkerPool({
    size: settings.workers,
    shared,
    balancers,
    log,
    env: { [PROXY_WORKER_ENV]: settings.role, GATEHOUSE_DATA_PLANE_ID: id, ...(tokens ? { [WORKER_SHARED_TOKENS_ENV]: '1' } : {}) },
  });
  // a verified snapshot or delta is applied here first (a bad one never reaches a worker), then forwarded
  const feed = busFeedOf(settings, bus, secret, id, log);
  const node = new DataPlaneNode({ feed, log, counters: { configRefused: () => refused.inc() }, forward: pool });
  const holder = node.holder;
  balancers.update(holder.current.upstreams);
  holder.onSwap((next) => balancers.update(next.upstreams));
  // the config is in place before any worker opens the ports: the cache, then the bus's latest (the workers take a
  // moment to start, and the first to listen must not serve an empty config while the others start)
  await node.open();
  await node.follow();
  // the self-signed default certificate is made once, here, before the workers read it
  if (settings.proxyTlsListen && !(settings.proxyTlsCert && settings.proxyTlsKey)) await selfSignedDefault(settings.dataDir);
  // a log level changed at run time (admin API, operations channel) holds in every worker too
  const unfollow = followRuntimeLogLevel(pool.setLogLevel);
  await pool.start();
  log.info('proxy workers listening', { workers: settings.workers, pids: pool.pids });
  // one /metrics for the node wherever it is served (status listener, admin API with `start`)
  const metricsSource = nodeMetricsSource(registry, pool);
  nodeMetrics?.aggregateWith(metricsSource);

  const reporter = await startHealthReporter(health, balancers, id, holder, log);
  const status = settings.statusListen
    ? await createStatusServer({
        holder,
        listen: settings.statusListen,
        counters: () => nodeCounters(pool),
        proxyListening: () => pool.listening,
        details: () => ({ node_id: id, sync: feed.status() }),
        metrics: metricsSource,
      })
    : null;
  const ports = pool.ports!;
  return {
    id,
    holder,
    feed,
    status,
    listening: { host: settings.proxyListen.host, port: ports.port, tlsPort: ports.tlsPort },
    workers: pool,
    reopenLog: () => pool.reopenLogs(),
    close: async () => {
      await reporter?.stop();
      await node.close();
      await status?.close();
      unfollow();
      await pool.stop(2000);
      balancers.close();
      purges?.disconnect();
    },
  };
}

/** What the primary keeps for the node and its workers call: local rate-limit counters, the memory proxy-cache, embedded oauth2 tokens. */
function nodeStores(settings: Settings, extraRuntime: PluginRuntime, log: Logger) {
  const cache = extraRuntime.proxyCacheMemory instanceof MemoryCacheStore ? extraRuntime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  const purges = subscribeCachePurges(settings, cache, log);
  const tokens = extraRuntime.oauth2Tokens ?? null;
  const shared = new SharedCallServer();
  serveNodeStores(shared, { counters: new LocalCounters(), cache, tokens });
  return { shared, purges, tokens };
}
