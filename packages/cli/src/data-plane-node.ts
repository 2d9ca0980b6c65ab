import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { hostname } from 'node:os';
import {
  AccessLog,
  applyDelta,
  ConfigHolder,
  createDataPlaneServer,
  createStatusServer,
  DataPlaneMetrics,
  HealthReporter,
  parseGatewayHeaders,
  SystemResolver,
  type DataPlaneServer,
  type StatusServer,
  type WorkerPool,
} from '@gatehouse/data-plane';
import {
  applyPurgeMessage,
  closeFileLogs,
  closeHttpLogQueues,
  MemoryCacheStore,
  PROXY_CACHE_MEMORY_BYTES,
  proxyCachePurgeChannel,
  rateLimitingConnections,
  type PluginRuntime,
} from '@gatehouse/plugins';
import { Registry } from 'prom-client';
import type { NodeMetrics } from './node-metrics';
import { Redis } from 'ioredis';
import { DataPlaneSync, type ConfigBus, type HealthChannel } from '@gatehouse/sync';
import { startDataPlanePrimary } from './data-plane-primary';
import type { Logger } from './logger';
import { compileForServing, defaultProxyCertificate } from './proxy-config';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

export interface DataPlaneNode {
  id: string;
  holder: ConfigHolder;
  status: StatusServer | null;
  sync: DataPlaneSync;
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
): Promise<DataPlaneNode> {
  const id = settings.dataPlaneId ?? randomUUID();
  if (settings.workers > 1) return startDataPlanePrimary(settings, bus, secret, log, id, extraRuntime, health, nodeMetrics);
  const headers = parseGatewayHeaders(settings.headers, `gatehouse/${GATEHOUSE_VERSION}`);
  // plugins that share state across data planes (rate-limiting redis policy) use one connection per process;
  // commands fail fast while Redis is down so a plugin's fault_tolerant setting decides, not a queue
  const redis = settings.redisUrl
    ? new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, retryStrategy: (n) => Math.min(n * 100, 2000) })
    : null;
  redis?.on('error', () => {});
  if (redis) nodeMetrics?.watchRedis(redis);
  const runtime: PluginRuntime = { ...extraRuntime, redisPrefix: settings.redisPrefix, log: { warn: log.warn, error: log.error } };
  if (redis) runtime.redis = redis;
  // proxy-cache's memory strategy: one cache per node; purges from the admin API arrive over Redis pub/sub
  const cacheMemory = runtime.proxyCacheMemory instanceof MemoryCacheStore ? runtime.proxyCacheMemory : new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES);
  runtime.proxyCacheMemory = cacheMemory;
  const purges = settings.redisUrl ? new Redis(settings.redisUrl, { retryStrategy: (n) => Math.min(n * 100, 2000) }) : null;
  purges?.on('error', () => {});
  purges?.on('message', (_channel: string, message: string) => applyPurgeMessage(cacheMemory, message));
  purges?.subscribe(proxyCachePurgeChannel(settings.redisPrefix)).catch((err: unknown) => log.warn('proxy-cache purge channel unavailable', { error: err instanceof Error ? err.message : String(err) }));
  const holder = new ConfigHolder();
  const metrics = new DataPlaneMetrics({ registry: nodeMetrics?.registry ?? new Registry(), nodeId: id, holder });
  const accessLog = settings.accessLog ? new AccessLog(settings.accessLog, (err) => log.error('access log: cannot write', { destination: settings.accessLog, error: err.message })) : null;
  const sync = new DataPlaneSync({
    bus,
    secret,
    cacheFile: join(settings.dataDir, 'data-plane-snapshot.json'),
    apply: (snapshot) => {
      const started = performance.now();
      holder.swap(compileForServing(snapshot, log, () => metrics.configRefused()));
      metrics.configApplied(performance.now() - started);
    },
    applyDelta: (delta) => {
      const started = performance.now();
      holder.swap(applyDelta(holder.current, delta));
      metrics.configApplied(performance.now() - started);
    },
    relabel: (version) => holder.swap({ ...holder.current, version }),
    currentVersion: () => (holder.loaded ? holder.current.version : null),
    currentHash: () => (holder.loaded ? holder.current.hash : null),
    identity: { id, version: GATEHOUSE_VERSION },
    logger: log,
    onApplied: (snapshot, source) => log.info('configuration applied', { version: snapshot.version, hash: snapshot.hash, source }),
  });
  // the cached config is in place before the proxy port opens: no request after a restart meets an empty config
  await sync.restoreFromCache();
  const tls = settings.proxyTlsListen;
  const defaultCertificate = await defaultProxyCertificate(settings);
  const proxy = await createDataPlaneServer({
    holder,
    listen: settings.proxyListen,
    tlsListen: tls,
    defaultCertificate,
    runtime,
    trustedIps: settings.trustedIps,
    underscoreHeaders: settings.underscoreHeaders,
    maxBufferedBody: settings.maxBufferedBody,
    log: { error: log.error, warn: log.warn },
    balancer: { resolver: new SystemResolver(settings.dnsResolver) },
    headers,
    accessLog,
    metrics,
  });
  // target health goes to the control plane; manual health comes back from it
  const reporter = health
    ? new HealthReporter({
        registry: proxy.balancers,
        channel: health,
        identity: { id, hostname: hostname() },
        configVersion: () => (holder.loaded ? holder.current.version : 0),
        log: { warn: log.warn },
      })
    : null;
  await reporter?.start();
  const status = settings.statusListen
    ? await createStatusServer({ holder, listen: settings.statusListen, proxy, details: () => ({ node_id: id, sync: sync.status() }), metrics: nodeMetrics?.registry })
    : null;
  await sync.start();
  return {
    id,
    holder,
    proxy,
    status,
    sync,
    metrics,
    listening: { host: proxy.host, port: proxy.port, tlsPort: proxy.tlsPort },
    reopenLog: () => accessLog?.reopen(),
    close: async () => {
      await reporter?.stop();
      await sync.stop();
      await status?.close();
      await proxy.close(2000);
      await accessLog?.close();
      await closeFileLogs();
      await closeHttpLogQueues();
      await rateLimitingConnections.close();
      redis?.disconnect();
      purges?.disconnect();
    },
  };
}
