import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  compile,
  ConfigHolder,
  createDataPlaneServer,
  createStatusServer,
  readPemPair,
  selfSignedDefault,
  type DataPlaneServer,
  type StatusServer,
} from '@gatehouse/data-plane';
import { rateLimitingConnections, type PluginRuntime } from '@gatehouse/plugins';
import { Redis } from 'ioredis';
import { DataPlaneSync, type ConfigBus } from '@gatehouse/sync';
import type { Logger } from './logger';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

export interface DataPlaneNode {
  id: string;
  holder: ConfigHolder;
  proxy: DataPlaneServer;
  status: StatusServer | null;
  sync: DataPlaneSync;
  close(): Promise<void>;
}

/** A data plane: serves the last good snapshot (disk cache first), follows the bus, never touches the database. */
export async function startDataPlaneNode(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  extraRuntime: PluginRuntime = {},
): Promise<DataPlaneNode> {
  // plugins that share state across data planes (rate-limiting redis policy) use one connection per process;
  // commands fail fast while Redis is down so a plugin's fault_tolerant setting decides, not a queue
  const redis = settings.redisUrl
    ? new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, retryStrategy: (n) => Math.min(n * 100, 2000) })
    : null;
  redis?.on('error', () => {});
  const runtime: PluginRuntime = { ...extraRuntime, redisPrefix: settings.redisPrefix, log: { warn: log.warn, error: log.error } };
  if (redis) runtime.redis = redis;
  const id = settings.dataPlaneId ?? randomUUID();
  const holder = new ConfigHolder();
  const sync = new DataPlaneSync({
    bus,
    secret,
    cacheFile: join(settings.dataDir, 'data-plane-snapshot.json'),
    apply: (snapshot) => {
      const compiled = compile(snapshot);
      for (const p of compiled.tls.problems) log.warn('TLS configuration not loaded', { entity: p.entity, id: p.id, problem: p.message });
      for (const w of compiled.warnings) if (w.message.includes('vault')) log.warn('plugin secret not resolved', { plugin_id: w.plugin_id, problem: w.message });
      holder.swap(compiled);
    },
    currentVersion: () => (holder.loaded ? holder.current.version : null),
    currentHash: () => (holder.loaded ? holder.current.hash : null),
    identity: { id, version: GATEHOUSE_VERSION },
    logger: log,
    onApplied: (snapshot, source) => log.info('configuration applied', { version: snapshot.version, hash: snapshot.hash, source }),
  });
  // the cached config is in place before the proxy port opens: no request after a restart meets an empty config
  await sync.restoreFromCache();
  const tls = settings.proxyTlsListen;
  const defaultCertificate = tls
    ? settings.proxyTlsCert && settings.proxyTlsKey
      ? readPemPair(settings.proxyTlsCert, settings.proxyTlsKey)
      : await selfSignedDefault(settings.dataDir)
    : undefined;
  const proxy = await createDataPlaneServer({
    holder,
    listen: settings.proxyListen,
    tlsListen: tls,
    defaultCertificate,
    runtime,
    trustedIps: settings.trustedIps,
    log: { error: log.error, warn: log.warn },
  });
  const status = settings.statusListen
    ? await createStatusServer({ holder, listen: settings.statusListen, proxy, details: () => ({ node_id: id, sync: sync.status() }) })
    : null;
  await sync.start();
  return {
    id,
    holder,
    proxy,
    status,
    sync,
    close: async () => {
      await sync.stop();
      await status?.close();
      await proxy.close(2000);
      await rateLimitingConnections.close();
      redis?.disconnect();
    },
  };
}
