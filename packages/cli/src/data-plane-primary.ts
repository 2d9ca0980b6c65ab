import { bundledPlugins } from '@gatehouse/plugins';
import { join } from 'node:path';
import {
  BalancerRegistry,
  applyDelta,
  ConfigHolder,
  createStatusServer,
  nodeCounters,
  nodeMetricsSource,
  selfSignedDefault,
  SharedCallServer,
  serveNodeStores,
  SystemResolver,
  WorkerPool,
} from '@gatehouse/data-plane';
import { LocalCounters, MemoryCacheStore, PROXY_CACHE_MEMORY_BYTES, type PluginRuntime } from '@gatehouse/plugins';
import { DataPlaneSync, type ConfigBus, type HealthChannel } from '@gatehouse/sync';
import { Counter, Registry } from 'prom-client';
import type { DataPlaneNode } from './data-plane-node';
import { followRuntimeLogLevel, type Logger } from './logger';
import { compileForServing, loadReclaimer, startHealthReporter, subscribeCachePurges, syncReporting } from './proxy-config';
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
): Promise<DataPlaneNode> {
  const registry = nodeMetrics?.registry ?? new Registry();
  // the primary refuses a bad config before any worker sees it; workers count the same series (0), summed
  const refused = new Counter({ name: 'gatehouse_data_plane_config_apply_failures_total', help: 'Configurations this data plane refused or failed to apply', registers: [registry] });
  const cache = extraRuntime.proxyCacheMemory instanceof MemoryCacheStore ? extraRuntime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  const purges = subscribeCachePurges(settings, cache, log);
  if (purges) nodeMetrics?.watchRedis(purges);
  const tokens = extraRuntime.oauth2Tokens ?? null;
  const shared = new SharedCallServer();
  serveNodeStores(shared, { counters: new LocalCounters(), cache, tokens });

  const holder = new ConfigHolder();
  const balancers = new BalancerRegistry({ resolver: new SystemResolver(settings.dnsResolver, settings.dnsOrder) });
  balancers.update(holder.current.upstreams);
  holder.onSwap((next) => balancers.update(next.upstreams));
  const pool = new WorkerPool({
    size: settings.workers,
    shared,
    balancers,
    log,
    env: { [PROXY_WORKER_ENV]: settings.role, GATEHOUSE_DATA_PLANE_ID: id, ...(tokens ? { [WORKER_SHARED_TOKENS_ENV]: '1' } : {}) },
  });
  const currentSnapshot = () => {
    const state = holder.current.incremental?.state;
    return state ? { ...state.toSnapshot(), version: holder.current.version } : null;
  };
  const sync = new DataPlaneSync({
    bus,
    secret,
    cacheFile: join(settings.dataDir, 'data-plane-snapshot.json'),
    apply: (snapshot) => {
      holder.swap(compileForServing(snapshot, log, () => refused.inc()));
      pool.publish(snapshot);
    },
    // a verified delta is applied here first (a bad one never reaches a worker), then forwarded
    applyDelta: (delta) => {
      try {
        holder.swap(applyDelta(holder.current, delta));
      } catch (err) {
        refused.inc();
        throw err;
      }
      loadReclaimer.deltaApplied(delta);
      pool.publishChange({ kind: 'delta', delta }, currentSnapshot);
    },
    relabel: (version) => {
      holder.swap({ ...holder.current, version });
      pool.publishChange({ kind: 'relabel', version }, currentSnapshot);
    },
    ...syncReporting(holder, id, log, { labels: settings.dataPlaneLabels, plugins: bundledPlugins.map((p) => p.name) }),
  });
  // the config is in place before any worker opens the ports: the cache, then the bus's latest (the workers take a
  // moment to start, and the first to listen must not serve an empty config while the others start)
  await sync.restoreFromCache();
  await sync.start();
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
        details: () => ({ node_id: id, sync: sync.status() }),
        metrics: metricsSource,
      })
    : null;
  const ports = pool.ports!;
  return {
    id,
    holder,
    sync,
    status,
    listening: { host: settings.proxyListen.host, port: ports.port, tlsPort: ports.tlsPort },
    workers: pool,
    reopenLog: () => pool.reopenLogs(),
    close: async () => {
      await reporter?.stop();
      await sync.stop();
      await status?.close();
      unfollow();
      await pool.stop(2000);
      balancers.close();
      purges?.disconnect();
    },
  };
}
