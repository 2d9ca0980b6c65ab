import { bundledPlugins, openPlugins, PluginQueues, queueLogger, type PluginRuntime } from '@gatehouse/plugins';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { SystemResolver } from '../../balancer';
import { ConfigHolder } from '../../config-holder';
import { DataPlaneMetrics } from '../../metrics/data-plane-metrics';
import { createDataPlaneServer } from '../../server';
import { PrimaryFeed, PrimaryLink } from '../../workers';
import { DataPlaneNode } from '../data-plane-node';
import type { DataPlaneSettings } from './options';
import { openAccessLog, proxyServerSettings } from './proxy-settings';
import { acmeOnDemand, pluginRedis } from './redis-links';
import { WORKER_SHARED_TOKENS_ENV } from './worker-env';

/**
 * One proxy worker of a data plane (forked by the primary, see start-primary.ts): it serves the config the primary
 * verified, on the ports every worker shares. Credentials, routes and plugin chains are its own compiled copy, so
 * key-auth never leaves the process; the node's shared state (local rate-limit counters, memory proxy-cache, embedded
 * oauth2 tokens, health) is the primary's, reached over IPC.
 */
export async function runProxyWorker(settings: DataPlaneSettings): Promise<void> {
  const { id, log } = settings;
  const link = new PrimaryLink();
  link.onLogLevel(({ level, timeout }) => settings.logLevel.set(level, timeout));
  const holder = new ConfigHolder();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });
  const pluginLog = { warn: log.warn, error: log.error };
  const queues = new PluginQueues(queueLogger(pluginLog));
  const metrics = new DataPlaneMetrics({ registry, nodeId: id, holder, queues });
  // what the primary could not load it has logged already; a delta this worker cannot take is asked for in full
  const node = new DataPlaneNode({ feed: new PrimaryFeed(link, log), log, counters: metrics, holder, logsProblems: false, countsRefusedDeltas: false });
  await node.open();

  const redis = pluginRedis(settings.redisUrl);
  const stores = link.stores(process.env[WORKER_SHARED_TOKENS_ENV] === '1');
  const runtime: PluginRuntime = {
    redisPrefix: settings.redisPrefix,
    syslogAddress: settings.syslogAddress,
    log: pluginLog,
    logLevel: settings.logLevel.current,
    queues,
    nodeId: id,
    rateLimitCounters: stores.rateLimitCounters,
    proxyCacheMemory: stores.proxyCacheMemory,
    ...(stores.oauth2Tokens ? { oauth2Tokens: stores.oauth2Tokens } : {}),
  };
  if (redis) runtime.redis = redis;
  const plugins = await openPlugins(runtime, bundledPlugins);
  const accessLog = openAccessLog(settings.accessLog, log);
  const proxy = await createDataPlaneServer({
    ...(await proxyServerSettings(settings)),
    holder,
    runtime,
    // the primary runs the node's active checks and counts passive results; this worker mirrors the outcome
    balancer: { resolver: new SystemResolver(settings.dnsResolver, settings.dnsOrder), activeChecks: false, passiveSink: link.passiveSink },
    accessLog,
    metrics,
    onDefaultCertificate: acmeOnDemand(holder, redis ?? undefined, settings.redisPrefix),
  });

  let closing = false;
  const stop = async (graceMs: number) => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(1), graceMs + 2000);
    force.unref();
    try {
      await proxy.close(graceMs);
      await accessLog?.close();
      await plugins.close();
      redis?.disconnect();
    } finally {
      process.exit(0);
    }
  };
  link.attach(proxy.balancers, { stats: () => proxy.stats(), registry }, { stop: (graceMs) => void stop(graceMs), reopenLog: () => accessLog?.reopen() });
  // Ctrl-C reaches the whole process group: the primary orders the stop. A SIGTERM sent to this worker alone stops
  // it gracefully, and the primary starts a replacement.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => void stop(2000));
  process.on('SIGUSR1', () => accessLog?.reopen());
  link.listening(proxy.port, proxy.tlsPort);
}
