import { bundledPlugins, MemoryCacheStore, openPlugins, PluginQueues, PROXY_CACHE_MEMORY_BYTES, queueLogger, type PluginRuntime } from '@gatehouse/plugins';
import { Registry } from 'prom-client';
import { SystemResolver } from '../../balancer';
import { ConfigHolder } from '../../config-holder';
import { DataPlaneMetrics } from '../../metrics/data-plane-metrics';
import { createDataPlaneServer } from '../../server';
import { createStatusServer } from '../../status-server';
import { DataPlaneNode } from '../data-plane-node';
import { busFeedOf, startHealthReporter } from './node-links';
import type { DataPlaneStartOptions, RunningDataPlane } from './options';
import { openAccessLog, proxyServerSettings } from './proxy-settings';
import { acmeOnDemand, pluginRedis, subscribeCachePurges } from './redis-links';
import { startDataPlanePrimary } from './start-primary';

/**
 * A data plane: serves the last good snapshot (disk cache first), follows the bus, never touches the database. With
 * more than one worker, this process is the primary of its proxy workers (see startDataPlanePrimary).
 */
export async function startDataPlane(options: DataPlaneStartOptions): Promise<RunningDataPlane> {
  if (options.workers > 1) return startDataPlanePrimary(options);
  const { id, log, metrics: nodeMetrics } = options;
  // plugins that share state across data planes (rate-limiting redis policy) use one connection per process
  const redis = pluginRedis(options.redisUrl);
  if (redis) nodeMetrics?.watchRedis(redis);
  const pluginLog = { warn: log.warn, error: log.error };
  const queues = new PluginQueues(queueLogger(pluginLog));
  const runtime: PluginRuntime = {
    ...options.extraRuntime,
    redisPrefix: options.redisPrefix,
    syslogAddress: options.syslogAddress,
    log: pluginLog,
    logLevel: options.logLevel.current,
    queues,
    nodeId: id,
  };
  if (redis) runtime.redis = redis;
  // proxy-cache's memory strategy: one cache per node; purges from the admin API arrive over Redis pub/sub
  const cacheMemory = runtime.proxyCacheMemory instanceof MemoryCacheStore ? runtime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  runtime.proxyCacheMemory = cacheMemory;
  const plugins = await openPlugins(runtime, bundledPlugins);
  const purges = subscribeCachePurges(options.redisUrl, options.redisPrefix, cacheMemory, log);
  const holder = new ConfigHolder();
  const metrics = new DataPlaneMetrics({ registry: nodeMetrics?.registry ?? new Registry(), nodeId: id, holder, queues });
  const accessLog = openAccessLog(options.accessLog, log);
  const feed = busFeedOf(options, id);
  const node = new DataPlaneNode({ feed, log, counters: metrics, holder });
  // the cached config is in place before the proxy port opens: no request after a restart meets an empty config
  await node.open();
  const proxy = await createDataPlaneServer({
    ...(await proxyServerSettings(options)),
    holder,
    runtime,
    balancer: { resolver: new SystemResolver(options.dnsResolver, options.dnsOrder) },
    accessLog,
    metrics,
    onDefaultCertificate: acmeOnDemand(holder, redis ?? undefined, options.redisPrefix),
  });
  // target health goes to the control plane; manual health comes back from it
  const reporter = await startHealthReporter(options.health, proxy.balancers, id, holder, log);
  const status = options.statusListen
    ? await createStatusServer({ holder, listen: options.statusListen, proxy, details: () => ({ node_id: id, sync: feed.status() }), metrics: nodeMetrics?.registry })
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
