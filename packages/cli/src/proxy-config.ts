import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  AccessLog,
  BusFeed,
  HealthReporter,
  parseErrorDefaultType,
  parseGatewayHeaders,
  parseHeadersUpstream,
  readPemPair,
  selfSignedDefault,
  setUpstreamCaBundle,
  type BalancerRegistry,
  type ConfigHolder,
  type DataPlaneServerOptions,
} from '@gatehouse/data-plane';
import { applyPurgeMessage, bundledPlugins, onDemandCertificates, processOrders, proxyCachePurgeChannel, redisOrders, type AcmeConfig, type MemoryCacheStore } from '@gatehouse/plugins';
import { openRedis, type ConfigBus, type HealthChannel, type RedisClient } from '@gatehouse/sync';
import type { Logger } from './logger';
import type { Listen, Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

/** The proxy's default TLS certificate: the configured pair, else the data directory's self-signed one (null: no TLS listener). */
export async function defaultProxyCertificate(settings: Settings): Promise<ReturnType<typeof readPemPair> | undefined> {
  if (!settings.proxyTlsListen && !settings.streamListen.some((listen) => listen.ssl)) return undefined;
  return settings.proxyTlsCert && settings.proxyTlsKey ? readPemPair(settings.proxyTlsCert, settings.proxyTlsKey) : selfSignedDefault(settings.dataDir);
}

/** Kong's lua_ssl_trusted_certificate (GATEHOUSE_UPSTREAM_CA_BUNDLE): read once per process, before any config compiles. */
export function adoptUpstreamCaBundle(settings: Settings): void {
  setUpstreamCaBundle(
    settings.upstreamCaBundle.map((path) => {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        throw new Error(`GATEHOUSE_UPSTREAM_CA_BUNDLE: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
  );
}

/** A listener with the Kong flags Node can honour: `backlog=N`, `reuseport` (Node 22.12 and later) and `proxy_protocol`. */
export function listenAddress(listen: Listen): { host: string; port: number; backlog?: number; reusePort?: boolean; proxyProtocol?: boolean } {
  const { host, port, flags } = listen;
  return { host, port, ...(flags?.backlog != null ? { backlog: flags.backlog } : {}), ...(flags?.reuseport ? { reusePort: true } : {}), ...(flags?.proxyProtocol ? { proxyProtocol: true } : {}) };
}

/** What the proxy server takes from the settings: the same for a data plane in one process and for a proxy worker. */
export async function proxyServerSettings(
  settings: Settings,
  log: Logger,
): Promise<
  Pick<DataPlaneServerOptions, 'listen' | 'h2c' | 'streamListen' | 'tlsListen' | 'defaultCertificate' | 'trustedIps' | 'realIp' | 'underscoreHeaders' | 'frontLane' | 'maxBufferedBody' | 'headersTimeout' | 'keepAliveTimeout' | 'log' | 'headers' | 'tracing' | 'errorDefaultType'>
> {
  return {
    listen: listenAddress(settings.proxyListen),
    h2c: settings.proxyHttp2,
    streamListen: settings.streamListen.map(({ host, port, ssl, udp, proxyProtocol }) => ({ host, port, ssl, udp, proxyProtocol })),
    tlsListen: settings.proxyTlsListen && listenAddress(settings.proxyTlsListen),
    defaultCertificate: await defaultProxyCertificate(settings),
    trustedIps: settings.trustedIps,
    realIp: settings.realIpHeader ? { header: settings.realIpHeader, recursive: settings.realIpRecursive } : null,
    underscoreHeaders: settings.underscoreHeaders,
    frontLane: settings.frontLane,
    maxBufferedBody: settings.maxBufferedBody,
    headersTimeout: settings.clientHeaderTimeout,
    keepAliveTimeout: settings.keepaliveTimeout,
    log: { error: log.error, warn: log.warn },
    headers: { ...parseGatewayHeaders(settings.headers, `gatehouse/${GATEHOUSE_VERSION}`), upstreamRequestId: parseHeadersUpstream(settings.headersUpstream) },
    errorDefaultType: parseErrorDefaultType(settings.errorDefaultType ?? undefined),
    tracing: settings.tracing,
  };
}

/** The access log GATEHOUSE_ACCESS_LOG asks for (null when off); a destination that cannot be written is logged. */
export function openAccessLog(settings: Settings, log: Logger): AccessLog | null {
  const destination = settings.accessLog;
  return destination ? new AccessLog(destination, (err) => log.error('access log: cannot write', { destination, error: err.message })) : null;
}

/**
 * The Redis connection of the plugins that share state across data planes (rate-limiting's redis policy): commands
 * fail fast while Redis is down, so a plugin's fault_tolerant setting decides, not a queue. Null without Redis.
 */
export function pluginRedis(settings: Settings): RedisClient | null {
  if (!settings.redisUrl) return null;
  const redis = openRedis(settings.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, retryStrategy: (n) => Math.min(n * 100, 2000) });
  redis.on('error', () => {});
  return redis;
}

/** The bus feed of a data plane node: the disk cache in the data directory, and what its heartbeats say of it. */
export function busFeedOf(settings: Settings, bus: ConfigBus, secret: string, id: string, log: Logger): BusFeed {
  return new BusFeed({
    bus,
    secret,
    cacheFile: join(settings.dataDir, 'data-plane-snapshot.json'),
    identity: { id, version: GATEHOUSE_VERSION, labels: settings.dataPlaneLabels, plugins: bundledPlugins.map((p) => p.name) },
    logger: log,
    onApplied: (snapshot, source) => log.info('configuration applied', { version: snapshot.version, hash: snapshot.hash, source }),
  });
}

/** proxy-cache purges from the admin API, over Redis pub/sub, applied to the node's memory cache; null without Redis */
export function subscribeCachePurges(settings: Settings, cache: MemoryCacheStore, log: Logger): RedisClient | null {
  if (!settings.redisUrl) return null;
  const purges = openRedis(settings.redisUrl, { retryStrategy: (n) => Math.min(n * 100, 2000) });
  purges.on('error', () => {});
  purges.on('message', (_channel: string, message: string) => applyPurgeMessage(cache, message));
  purges.subscribe(proxyCachePurgeChannel(settings.redisPrefix)).catch((err: unknown) => log.warn('proxy-cache purge channel unavailable', { error: err instanceof Error ? err.message : String(err) }));
  return purges;
}

/** The node's target health to the control plane, and manual health back from it; null without a health channel. */
export async function startHealthReporter(health: HealthChannel | null, balancers: BalancerRegistry, id: string, holder: ConfigHolder, log: Logger): Promise<HealthReporter | null> {
  if (!health) return null;
  const reporter = new HealthReporter({
    registry: balancers,
    channel: health,
    identity: { id, hostname: hostname() },
    configVersion: () => (holder.loaded ? holder.current.version : 0),
    log: { warn: log.warn },
  });
  await reporter.start();
  return reporter;
}

/**
 * What a proxy does with a TLS handshake the default certificate answers: when the acme plugin covers the name, it
 * asks the control plane to order a certificate (over Redis, or in this process for `gatehouse start` alone).
 */
export function acmeOnDemand(holder: { current: { indexes: ReadonlyMap<string, unknown> } }, redis: RedisClient | undefined, prefix: string): (servername: string) => void {
  const orders = redis ? redisOrders(redis, prefix) : processOrders;
  return onDemandCertificates(() => (holder.current.indexes.get('acme') as AcmeConfig | null | undefined) ?? null, orders);
}
