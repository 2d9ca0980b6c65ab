import { LocalCounters, MemoryCacheStore, PROXY_CACHE_MEMORY_BYTES } from '@gatehouse/plugins';
import { Counter, Registry } from 'prom-client';
import { BalancerRegistry, SystemResolver } from '../../balancer';
import { createStatusServer } from '../../status-server';
import { selfSignedDefault } from '../../tls';
import { nodeCounters, nodeMetricsSource, serveNodeStores, SharedCallServer, WorkerPool } from '../../workers';
import { DataPlaneNode } from '../data-plane-node';
import { busFeedOf, startHealthReporter } from './node-links';
import type { DataPlaneStartOptions, RunningDataPlane } from './options';
import { subscribeCachePurges } from './redis-links';
import { WORKER_SHARED_TOKENS_ENV } from './worker-env';

/**
 * A data plane with `options.workers` proxy workers. This process (the primary) follows the bus: one snapshot fetch,
 * one signature check, one compile (to refuse a bad config and to drive the health checks) and one disk-cache write
 * per node, then forwards the verified snapshot to every worker. It also holds what Kong keeps per node: the local
 * rate-limit counters, the memory proxy-cache, the oauth2 tokens of the embedded mode, the balancers' health (active
 * checks run here once, passive results from every worker are counted here) and the status listener, which sums the
 * workers' counters and aggregates their metrics.
 */
export async function startDataPlanePrimary(options: DataPlaneStartOptions): Promise<RunningDataPlane> {
  const { id, log, metrics: nodeMetrics } = options;
  const registry = nodeMetrics?.registry ?? new Registry();
  // the primary refuses a bad config before any worker sees it; workers count the same series (0), summed
  const refused = new Counter({ name: 'gatehouse_data_plane_config_apply_failures_total', help: 'Configurations this data plane refused or failed to apply', registers: [registry] });
  const { shared, purges, tokens } = nodeStores(options);
  if (purges) nodeMetrics?.watchRedis(purges);

  const balancers = new BalancerRegistry({ resolver: new SystemResolver(options.dnsResolver, options.dnsOrder) });
  const pool = new WorkerPool({
    size: options.workers,
    shared,
    balancers,
    log,
    env: { ...options.workerEnv, ...(tokens ? { [WORKER_SHARED_TOKENS_ENV]: '1' } : {}) },
  });
  // a verified snapshot or delta is applied here first (a bad one never reaches a worker), then forwarded
  const feed = busFeedOf(options, id);
  const node = new DataPlaneNode({ feed, log, counters: { configRefused: () => refused.inc() }, forward: pool });
  const holder = node.holder;
  balancers.update(holder.current.upstreams);
  holder.onSwap((next) => balancers.update(next.upstreams));
  // the config is in place before any worker opens the ports: the cache, then the bus's latest (the workers take a
  // moment to start, and the first to listen must not serve an empty config while the others start)
  await node.open();
  await node.follow();
  // the self-signed default certificate is made once, here, before the workers read it
  if (options.proxy.tlsListen && !options.proxy.tlsCertificate) await selfSignedDefault(options.dataDir);
  // a log level changed at run time (admin API, operations channel) holds in every worker too
  const unfollow = options.logLevel.follow(pool.setLogLevel);
  await pool.start();
  log.info('proxy workers listening', { workers: options.workers, pids: pool.pids });
  // one /metrics for the node wherever it is served (status listener, admin API with `start`)
  const metricsSource = nodeMetricsSource(registry, pool);
  nodeMetrics?.aggregateWith(metricsSource);

  const reporter = await startHealthReporter(options.health, balancers, id, holder, log);
  const status = options.statusListen
    ? await createStatusServer({
        holder,
        listen: options.statusListen,
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
    listening: { host: options.proxy.listen.host, port: ports.port, tlsPort: ports.tlsPort },
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
function nodeStores(options: DataPlaneStartOptions) {
  const extraRuntime = options.extraRuntime ?? {};
  const cache = extraRuntime.proxyCacheMemory instanceof MemoryCacheStore ? extraRuntime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  const purges = subscribeCachePurges(options.redisUrl, options.redisPrefix, cache, options.log);
  const tokens = extraRuntime.oauth2Tokens ?? null;
  const shared = new SharedCallServer();
  serveNodeStores(shared, { counters: new LocalCounters(), cache, tokens });
  return { shared, purges, tokens };
}
