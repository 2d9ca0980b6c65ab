#!/usr/bin/env node
// The `gatehouse` command: start | control-plane | data-plane | help.
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { acmeExtension, oauth2TokensExtension, proxyCacheExtension } from '@gatehouse/control-plane';
import { loadCustomPlugins, localCacheAdmin, MemoryCacheStore, processChallenges, redisChallenges, MemoryTokenStore, PROXY_CACHE_MEMORY_BYTES, processOrders, purgeClearOAuth2Tokens, redisCacheAdmin, redisOrders, redisTokenStore, setUntrustedLua, type OAuth2TokenStore } from '@gatehouse/plugins';
import type { ConfigBus } from '@gatehouse/sync';
import { openRedis } from '@gatehouse/sync';
import { adminUrlOf } from './admin-listener';
import { openBus, openHealthChannel, servesFileAlone } from './bus';
import { startDeclarativeNode, type DeclarativeNode } from './declarative-node';
import { startControlPlaneNode, type ControlPlaneNode } from './control-plane-node';
import { startDataPlaneNode, type RunningDataPlane } from './data-plane-node';
import { PROXY_WORKER_ENV } from './data-plane-primary';
import { adoptUpstreamCaBundle } from './proxy-config';
import { runProxyWorker } from './proxy-worker-node';
import { runConfigCommand } from './config-command';
import { confPathOf, noticeLine, runCheckCommand, startRole } from './kong-settings/cli';
import { applyKongSettings, type KongNotice } from './kong-settings';
import { embeddedClusterSecret } from './embedded-secret';
import { createLogger, type Logger } from './logger';
import { kongConfiguration } from './kong-settings/configuration';
import { logLevelControl, openOperationsChannel } from './operations-channel';
import { createNodeMetrics, type NodeMetrics } from './node-metrics';
import { adminExposureWarning, checkClusterSecret } from './safe-defaults';
import { readSettings, SETTINGS_DOC, type Role, type Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

const ROLES: Record<string, Role> = { start: 'all', 'control-plane': 'control_plane', 'data-plane': 'data_plane' };

function usage(): string {
  const rows = SETTINGS_DOC.map((s) => `  ${s.name.padEnd(26)} ${s.meaning} [${s.default}]`).join('\n');
  return `gatehouse ${GATEHOUSE_VERSION}

Usage: gatehouse <command>

Commands:
  start           control plane and data plane in one process (embedded database and bus unless configured)
  control-plane   the admin API over Postgres, publishing snapshots to Redis
  data-plane      a proxy fed by snapshots from Redis; no database access
  config          dump | validate | diff | apply a declarative configuration (gatehouse config help)
  check <conf>    validate a kong.conf (with the KONG_* and GATEHOUSE_* environment over it)
  help            this text

Options of start, control-plane and data-plane:
  -c, --conf <path>   read Kong's settings from a kong.conf file (also GATEHOUSE_CONF); KONG_* variables are read
                      too; GATEHOUSE_* variables win over both

Environment:
${rows}
`;
}

function clusterSecret(settings: Settings): string {
  if (settings.clusterSecret) {
    checkClusterSecret(settings.clusterSecret);
    return settings.clusterSecret;
  }
  if ((settings.role === 'all' && !settings.redisUrl) || servesFileAlone(settings)) return embeddedClusterSecret(settings.dataDir);
  throw new Error('GATEHOUSE_CLUSTER_SECRET is required when snapshots travel through Redis (the same value on every node)');
}

/** Applies kong.conf and KONG_* to process.env (variables already set win); returns what was not applied, to log once. */
function adoptKongSettings(args: string[]): KongNotice[] {
  const kong = applyKongSettings(process.env, confPathOf(args, process.env));
  for (const [key, value] of Object.entries(kong.env)) if (process.env[key] === undefined) process.env[key] = value;
  return kong.notices;
}

const show = (l: { host: string; port: number }) => `http://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;

/** `config`, `check` and `help`: commands that run and end; false for a command that starts a node. */
async function runOneShotCommand(command: string): Promise<boolean> {
  if (command === 'config') {
    process.exitCode = await runConfigCommand(process.argv.slice(3), {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      interactive: process.stderr.isTTY === true,
    });
    return true;
  }
  if (command === 'check') {
    process.exitCode = runCheckCommand(process.argv.slice(3), { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env });
    return true;
  }
  if (ROLES[command]) return false;
  process.stdout.write(usage());
  process.exitCode = command === 'help' || command === '--help' || command === '-h' ? 0 : 2;
  return true;
}

/** The node-wide stores the admin API and the proxy share: oauth2 tokens, acme orders, the memory proxy-cache. */
function openNodeStores(settings: Settings, role: Role, metrics: NodeMetrics, log: Logger) {
  // oauth2 tokens live where every data plane sees them: Redis in a cluster, one shared store in one process
  const tokenRedis = settings.redisUrl && role !== 'data_plane' ? openRedis(settings.redisUrl, { maxRetriesPerRequest: 1 }) : null;
  tokenRedis?.on('error', () => {});
  if (tokenRedis) metrics.watchRedis(tokenRedis);
  // tokens an earlier release kept in clear go once, in the background
  if (tokenRedis) {
    purgeClearOAuth2Tokens(tokenRedis, settings.redisPrefix).then(
      (removed) => removed > 0 && log.warn('oauth2 tokens stored in clear by an earlier release removed; their clients must ask for new ones', { keys: removed }),
      (err: Error) => log.warn('oauth2 tokens stored in clear could not be removed; trying again at the next start', { error: err.message }),
    );
  }
  // acme: the names data planes ask certificates for arrive here over Redis (or in this process)
  const acmeSubscriber = tokenRedis && settings.redisUrl ? openRedis(settings.redisUrl, { retryStrategy: (n) => Math.min(n * 100, 2000) }) : null;
  acmeSubscriber?.on('error', () => {});
  const acmeOrders = tokenRedis && acmeSubscriber ? redisOrders(tokenRedis, settings.redisPrefix, acmeSubscriber) : processOrders;
  const tokens: OAuth2TokenStore | null = tokenRedis ? redisTokenStore(tokenRedis, settings.redisPrefix) : role === 'all' ? new MemoryTokenStore() : null;
  // proxy-cache: the data plane's memory cache; the admin API purges it in place (one process) or over Redis
  const cacheMemory = role !== 'control_plane' ? new MemoryCacheStore(PROXY_CACHE_MEMORY_BYTES) : null;
  const cacheAdmin = tokenRedis ? redisCacheAdmin(tokenRedis, settings.redisPrefix, cacheMemory) : cacheMemory ? localCacheAdmin(cacheMemory) : null;
  return {
    tokenRedis,
    acmeOrders,
    tokens,
    cacheMemory,
    cacheAdmin,
    close: () => {
      tokenRedis?.disconnect();
      acmeSubscriber?.disconnect();
    },
  };
}

/** SIGINT and SIGTERM stop the node (forced after 10 s); SIGUSR1 reopens the access log. */
function onSignals(close: () => Promise<void>, reopenLog: () => void): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`\n${signal}: stopping gatehouse…\n`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      await close();
    } finally {
      process.stdout.write('stopped\n');
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // log rotation: the access log file is opened again on its next write
  process.on('SIGUSR1', reopenLog);
}

/** The proxy's lines once everything listens. */
function announceProxy(proxy: RunningDataPlane, settings: Settings): void {
  const workers = proxy.workers ? ` (${settings.workers} workers)` : '';
  process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: proxy listening on ${show({ host: proxy.listening.host, port: proxy.listening.port })}${workers}\n`);
  if (proxy.listening.tlsPort !== null) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: proxy TLS listening on ${show({ host: settings.proxyTlsListen!.host, port: proxy.listening.tlsPort }).replace(/^http:/, 'https:')}\n`);
  if (proxy.status) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: status API listening on ${show({ host: settings.statusListen!.host, port: proxy.status.port })}\n`);
}

/** A proxy worker forked by a data plane's primary (GATEHOUSE_WORKERS > 1): the proxy only, with the primary's settings. */
function forkedProxyWorker(): Promise<void> | null {
  const primaryRole = process.env[PROXY_WORKER_ENV];
  if (!cluster.isWorker || (primaryRole !== 'all' && primaryRole !== 'data_plane')) return null;
  const settings = readSettings(process.env, primaryRole);
  adoptUpstreamCaBundle(settings);
  setUntrustedLua(settings.untrustedLua);
  return runProxyWorker(settings, createLogger(settings.logLevel, primaryRole));
}

/** The settings of the node this process runs, with one node id for the process (the data plane reports it, kong_node_info carries it). */
function nodeSettings(command: string): { settings: Settings & { dataPlaneId: string }; role: Role; kongNotices: KongNotice[] } {
  // Kong's names (kong.conf, KONG_*) complete the environment, here so that proxy workers inherit the result
  const kongNotices = adoptKongSettings(process.argv.slice(3));
  const role = command === 'start' ? startRole(process.env) : ROLES[command]!;
  const read = readSettings(process.env, role);
  adoptUpstreamCaBundle(read);
  setUntrustedLua(read.untrustedLua);
  return { settings: { ...read, dataPlaneId: read.dataPlaneId ?? randomUUID() }, role, kongNotices };
}

async function run(command: string): Promise<void> {
  if (await runOneShotCommand(command)) return;
  // custom plugins (Kong's `plugins` setting) join the catalogue before either plane reads it
  await loadCustomPlugins(process.env.GATEHOUSE_PLUGINS, process.cwd());
  const worker = forkedProxyWorker();
  if (worker) return worker;
  const { settings, role, kongNotices } = nodeSettings(command);
  const metrics = createNodeMetrics(settings.dataPlaneId, GATEHOUSE_VERSION);
  const log = createLogger(settings.logLevel, role);
  for (const notice of kongNotices) log.warn(noticeLine(notice), { setting: notice.name });
  const secret = clusterSecret(settings);
  const bus: ConfigBus = openBus(settings, log);
  const health = openHealthChannel(settings, log);
  const operations = openOperationsChannel(settings, secret, settings.dataPlaneId, log);
  const stores = openNodeStores(settings, role, metrics, log);
  const { tokenRedis, tokens, cacheMemory, cacheAdmin } = stores;
  let cp: ControlPlaneNode | null = null;
  let declarative: DeclarativeNode | null = null;
  let dp: RunningDataPlane | null = null;
  onSignals(async () => {
    await dp?.close();
    await cp?.close();
    await declarative?.close();
    await bus.close();
    await health.close();
    await operations.close();
    stores.close();
  }, () => dp?.reopenLog());

  // resolves once every proxy listener (plain and TLS, every worker's) accepts connections
  const startProxy = async () => {
    const extraRuntime = { ...(!settings.redisUrl && tokens ? { oauth2Tokens: tokens } : {}), ...(cacheMemory ? { proxyCacheMemory: cacheMemory } : {}) };
    dp = await startDataPlaneNode(settings, bus, secret, log, extraRuntime, health, metrics);
  };
  const dataPlaneStatus = () => (dp ? { hash: dp.holder.current.hash, sync: dp.feed.status() } : null);
  if (settings.database === 'off' && (role !== 'data_plane' || servesFileAlone(settings))) {
    // no database: the declarative file (and, with an admin API, POST /config) is the configuration
    declarative = await startDeclarativeNode(settings, bus, secret, log, {
      admin: role !== 'data_plane',
      statusExtras: () => {
        const status = dataPlaneStatus();
        return status ? { configuration_hash_data_plane: status.hash, data_plane: status.sync } : {};
      },
      beforeAdminListens: role === 'control_plane' ? undefined : startProxy,
      configuration: { ...kongConfiguration(settings, process.env), database: 'off' },
    });
    if (declarative.admin) {
      const exposure = adminExposureWarning(settings);
      if (exposure) log.warn(exposure);
      process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: admin API listening on ${adminUrlOf(settings, declarative.admin)} (database: off${settings.declarativeConfig ? `, ${settings.declarativeConfig}` : ''})\n`);
    }
  } else if (role !== 'data_plane') {
    cp = await startControlPlaneNode(settings, bus, secret, log, {
      statusExtras: () => {
        const status = dataPlaneStatus();
        return status ? { configuration_hash: status.hash, data_plane: status.sync } : {};
      },
      extensions: [
        ...(tokens ? [oauth2TokensExtension(tokens)] : []),
        ...(cacheAdmin ? [proxyCacheExtension(cacheAdmin)] : []),
        // acme: challenges wait where the data planes answer them (their Redis, or this process for `start` alone)
        acmeExtension(tokenRedis ? redisChallenges(tokenRedis, settings.redisPrefix) : processChallenges, stores.acmeOrders, (host, err) =>
          log.error('acme: ordering a certificate a data plane asked for failed', { host, error: err.message }),
        ),
      ],
      health,
      metrics,
      logLevel: logLevelControl(operations, settings.dataPlaneId, process.env.GATEHOUSE_DATABASE === 'off'),
      configuration: kongConfiguration(settings, process.env),
      statusListener: role === 'control_plane',
      // with `start` the proxy takes the first snapshot and listens before the admin API opens: whoever sees the admin
      // API can use the proxy
      beforeAdminListens: role === 'all' ? startProxy : undefined,
    });
    const exposure = adminExposureWarning(settings);
    if (exposure) log.warn(exposure);
    if (cp.status) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: status API listening on ${show({ host: cp.status.host, port: cp.status.port })}\n`);
    process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: admin API listening on ${adminUrlOf(settings, cp.admin)} (database: ${cp.database.kind}${settings.databaseUrl ? '' : `, in ${settings.dataDir}`})\n`);
  } else {
    await startProxy();
  }
  // the proxy's lines once everything listens (`startProxy` set it, which the compiler cannot follow)
  const proxy = dp as RunningDataPlane | null;
  if (proxy) announceProxy(proxy, settings);
  process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: ${settings.redisUrl ? 'snapshots over Redis' : 'in-process snapshot bus'}; Ctrl-C stops\n`);
}

run(process.argv[2] ?? 'help').catch((err: unknown) => {
  process.stderr.write(`gatehouse: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
