import { randomUUID } from 'node:crypto';
import {
  ConfigHolder,
  createDataPlaneServer,
  DataPlaneNode,
  createStatusServer,
  DataPlaneMetrics,
  SystemResolver,
  type BusFeed,
  type DataPlaneServer,
  type StatusServer,
  type WorkerPool,
} from '@gatehouse/data-plane';
import { bundledPlugins, MemoryCacheStore, openPlugins, PluginQueues, PROXY_CACHE_MEMORY_BYTES, queueLogger, type PluginRuntime } from '@gatehouse/plugins';
import { Registry } from 'prom-client';
import type { NodeMetrics } from './node-metrics';
import type { ConfigBus, HealthChannel } from '@gatehouse/sync';
import { startDataPlanePrimary } from './data-plane-primary';
import { currentLogLevel, type Logger } from './logger';
import { acmeOnDemand, busFeedOf, openAccessLog, pluginRedis, proxyServerSettings, startHealthReporter, subscribeCachePurges } from './proxy-config';
import type { Settings } from './settings';

/** A data plane running in this process (with its proxy workers, if any): what `main` reports and stops. */
export interface RunningDataPlane {
  id: string;
  holder: ConfigHolder;
  status: StatusServer | null;
  /** the bus feed: its status is the node's `sync` in the status endpoints */
  feed: BusFeed;
  /** where the proxy listens (the ports every worker shares, with proxy workers) */
  listening: { host: string; port: number; tlsPort: number | null };
  /** the proxy, when it runs in this process (GATEHOUSE_WORKERS=1) */
  proxy?: DataPlaneServer;
  metrics?: DataPlaneMetrics;
  /** the proxy workers, when there are several */
  workers?: WorkerPool;
  /** opens the access log file again (SIGUSR1) */
  reopenLog(): void;
  close(): Promise<void>;
}

/** A data plane: serves the last good snapshot (disk cache first), follows the bus, never touches the database. */
export async function startDataPlaneNode(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  extraRuntime: PluginRuntime = {},
  health: HealthChannel | null = null,
  nodeMetrics?: NodeMetrics,
): Promise<RunningDataPlane> {
  const id = settings.dataPlaneId ?? randomUUID();
  if (settings.workers > 1) return startDataPlanePrimary(settings, bus, secret, log, id, extraRuntime, health, nodeMetrics);
  // plugins that share state across data planes (rate-limiting redis policy) use one connection per process
  const redis = pluginRedis(settings);
  if (redis) nodeMetrics?.watchRedis(redis);
  const pluginLog = { warn: log.warn, error: log.error };
  const queues = new PluginQueues(queueLogger(pluginLog));
  const runtime: PluginRuntime = { ...extraRuntime, redisPrefix: settings.redisPrefix, syslogAddress: settings.syslogAddress, log: pluginLog, logLevel: currentLogLevel, queues, nodeId: id };
  if (redis) runtime.redis = redis;
  // proxy-cache's memory strategy: one cache per node; purges from the admin API arrive over Redis pub/sub
  const cacheMemory = runtime.proxyCacheMemory instanceof MemoryCacheStore ? runtime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  runtime.proxyCacheMemory = cacheMemory;
  const plugins = await openPlugins(runtime, bundledPlugins);
  const purges = subscribeCachePurges(settings, cacheMemory, log);
  const holder = new ConfigHolder();
  const metrics = new DataPlaneMetrics({ registry: nodeMetrics?.registry ?? new Registry(), nodeId: id, holder, queues });
  const accessLog = openAccessLog(settings, log);
  const feed = busFeedOf(settings, bus, secret, id, log);
  const node = new DataPlaneNode({ feed, log, counters: metrics, holder });
  // the cached config is in place before the proxy port opens: no request after a restart meets an empty config
  await node.open();
  const proxy = await createDataPlaneServer({
    ...(await proxyServerSettings(settings, log)),
    holder,
    runtime,
    balancer: { resolver: new SystemResolver(settings.dnsResolver, settings.dnsOrder) },
    accessLog,
    metrics,
    onDefaultCertificate: acmeOnDemand(holder, redis ?? undefined, settings.redisPrefix),
  });
  // target health goes to the control plane; manual health comes back from it
  const reporter = await startHealthReporter(health, proxy.balancers, id, holder, log);
  const status = settings.statusListen
    ? await createStatusServer({ holder, listen: settings.statusListen, proxy, details: () => ({ node_id: id, sync: feed.status() }), metrics: nodeMetrics?.registry })
    : null;
  await node.follow();
  return {
    id,
    holder,
    proxy,
    status,
    feed,
    metrics,
    listening: { host: proxy.host, port: proxy.port, tlsPort: proxy.tlsPort },
    reopenLog: () => accessLog?.reopen(),
    close: async () => {
      await reporter?.stop();
      await node.close();
      await status?.close();
      await proxy.close(2000);
      await accessLog?.close();
      await plugins.close();
      redis?.disconnect();
      purges?.disconnect();
    },
  };
}
