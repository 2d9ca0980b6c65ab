import cluster from 'node:cluster';
import { acmeExtension, oauth2TokensExtension, proxyCacheExtension, startControlPlane, startDeclarative, type ControlPlaneNode, type DeclarativeNode } from '@gatehouse/control-plane';
import { PROXY_WORKER_ENV, runProxyWorker, startDataPlane, type RunningDataPlane } from '@gatehouse/data-plane';
import { processChallenges, redisChallenges, setUntrustedLua } from '@gatehouse/plugins';
import { openBus, openHealthChannel, servesFileAlone } from './bus';
import { controlPlaneOptions, declarativeOptions } from './control-plane-options';
import { adoptUpstreamCaBundle, dataPlaneOptions, dataPlaneSettings } from './data-plane-options';
import { embeddedClusterSecret } from './embedded-secret';
import { kongConfiguration } from './settings/kong/configuration';
import { createLogger, type Logger } from './logger';
import type { NodeMetrics } from './node-metrics';
import { openNodeStores } from './node-stores';
import { logLevelControl, openOperationsChannel } from './operations-channel';
import { checkClusterSecret } from './safe-defaults';
import { readSettings, type Role, type Settings } from './settings';

/** The planes a node runs once it has started: what `main` reports. */
export interface StartedNode {
  controlPlane: ControlPlaneNode | null;
  declarative: DeclarativeNode | null;
  dataPlane: RunningDataPlane | null;
}

/** A node starting in this process: `ready` once every listener accepts connections; `close` stops what has started. */
export interface GatehouseNode {
  ready: Promise<StartedNode>;
  close(): Promise<void>;
  /** opens the access log file again (SIGUSR1) */
  reopenLog(): void;
}

/** What a node takes besides its role and settings. */
export interface NodeContext {
  log: Logger;
  metrics: NodeMetrics;
  /** the environment (Kong's `configuration` of GET /, whether the database is off) */
  env: NodeJS.ProcessEnv;
}

function clusterSecret(settings: Settings): string {
  if (settings.clusterSecret) {
    checkClusterSecret(settings.clusterSecret);
    return settings.clusterSecret;
  }
  if ((settings.role === 'all' && !settings.redisUrl) || servesFileAlone(settings)) return embeddedClusterSecret(settings.dataDir);
  throw new Error('GATEHOUSE_CLUSTER_SECRET is required when snapshots travel through Redis (the same value on every node)');
}

/**
 * The node of `role` (`start`: all, `control-plane`, `data-plane`): the bus, health and operations channels and the
 * node-wide stores open at once (a bad setting throws here); then the control plane or the declarative source, and the
 * data plane, start. With both planes the proxy listens before the admin API opens. `close` stops the data plane,
 * then the control plane, then the channels and stores.
 */
export function startNode(role: Role, settings: Settings & { dataPlaneId: string }, context: NodeContext): GatehouseNode {
  const { log, metrics, env } = context;
  const secret = clusterSecret(settings);
  const bus = openBus(settings, log);
  const health = openHealthChannel(settings, log);
  const operations = openOperationsChannel(settings, secret, settings.dataPlaneId, log);
  const stores = openNodeStores(settings, role, metrics, log);
  const { tokenRedis, tokens, cacheMemory, cacheAdmin } = stores;
  const started: StartedNode = { controlPlane: null, declarative: null, dataPlane: null };

  // resolves once every proxy listener (plain and TLS, every worker's) accepts connections
  const startProxy = async () => {
    const extraRuntime = { ...(!settings.redisUrl && tokens ? { oauth2Tokens: tokens } : {}), ...(cacheMemory ? { proxyCacheMemory: cacheMemory } : {}) };
    started.dataPlane = await startDataPlane(dataPlaneOptions(settings, { id: settings.dataPlaneId, log, bus, secret, health, metrics, extraRuntime }));
  };
  // what GET /status adds of this process's data plane: its hash under `hashKey`, and its sync state
  const dataPlaneStatus = (hashKey: string) => () => {
    const dp = started.dataPlane;
    return dp ? { [hashKey]: dp.holder.current.hash, data_plane: dp.feed.status() } : {};
  };

  const start = async (): Promise<StartedNode> => {
    if (settings.database === 'off' && (role !== 'data_plane' || servesFileAlone(settings))) {
      // no database: the declarative file (and, with an admin API, POST /config) is the configuration
      started.declarative = await startDeclarative(
        declarativeOptions(settings, {
          admin: role !== 'data_plane',
          bus,
          secret,
          log,
          statusExtras: dataPlaneStatus('configuration_hash_data_plane'),
          beforeAdminListens: role === 'control_plane' ? undefined : startProxy,
          configuration: { ...kongConfiguration(settings, env), database: 'off' },
        }),
      );
    } else if (role !== 'data_plane') {
      started.controlPlane = await startControlPlane(
        controlPlaneOptions(settings, {
          bus,
          secret,
          log,
          statusExtras: dataPlaneStatus('configuration_hash'),
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
          logLevel: logLevelControl(operations, settings.dataPlaneId, env.GATEHOUSE_DATABASE === 'off'),
          configuration: kongConfiguration(settings, env),
          // with `start` the proxy takes the first snapshot and listens before the admin API opens: whoever sees the
          // admin API can use the proxy
          beforeAdminListens: role === 'all' ? startProxy : undefined,
        }),
      );
    } else {
      await startProxy();
    }
    return started;
  };

  return {
    ready: start(),
    close: async () => {
      await started.dataPlane?.close();
      await started.controlPlane?.close();
      await started.declarative?.close();
      await bus.close();
      await health.close();
      await operations.close();
      stores.close();
    },
    reopenLog: () => started.dataPlane?.reopenLog(),
  };
}

/**
 * A proxy worker forked by a data plane's primary (GATEHOUSE_WORKERS > 1): the proxy only, with the primary's
 * settings (read for the role the primary marks it with); null in any other process.
 */
export function forkedProxyWorker(env: NodeJS.ProcessEnv): Promise<void> | null {
  const primaryRole = env[PROXY_WORKER_ENV];
  if (!cluster.isWorker || (primaryRole !== 'all' && primaryRole !== 'data_plane')) return null;
  const settings = readSettings(env, primaryRole);
  adoptUpstreamCaBundle(settings);
  setUntrustedLua(settings.untrustedLua);
  return runProxyWorker(dataPlaneSettings(settings, settings.dataPlaneId ?? 'unknown', createLogger(settings.logLevel, primaryRole)));
}
