import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A connection to one Redis (possibly found through Sentinel) or to a Redis Cluster: the commands are the same. */
export type RedisClient = Redis | Cluster;

/**
 * `REDIS_URL` forms: `redis://…` / `rediss://…` (one server), and Sentinel
 * `redis+sentinel://[:password@]host:port[,host:port…]/<master>[/db]` (`rediss+sentinel://` for TLS): the sentinels
 * are asked for the master's address, and asked again after a failover.
 */
export function sentinelOptions(url: string): RedisOptions | null {
  const m = /^(rediss?)\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+)\/([^/]+)(?:\/(\d+))?\/?$/.exec(url.trim());
  if (!m) {
    if (/^rediss?\+sentinel:/.test(url.trim())) throw new Error('REDIS_URL: a Sentinel URL is redis+sentinel://[:password@]host:port[,host:port…]/<master>[/db]');
    return null;
  }
  const sentinels = hostPorts(m[4]!, 'sentinel');
  const password = m[3] !== undefined ? decodeURIComponent(m[3]) : undefined;
  const username = m[2] ? decodeURIComponent(m[2]) : undefined;
  return {
    sentinels,
    name: decodeURIComponent(m[5]!),
    ...(m[6] !== undefined ? { db: Number(m[6]) } : {}),
    ...(password !== undefined ? { password, sentinelPassword: password } : {}),
    ...(username ? { username } : {}),
    ...(m[1] === 'rediss' ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
  };
}

function hostPorts(list: string, what: string): Array<{ host: string; port: number }> {
  return list.split(',').map((hostPort) => {
    const at = /^\[?([^\]]+?)\]?:(\d+)$/.exec(hostPort.trim());
    if (!at) throw new Error(`REDIS_URL: ${what} '${hostPort}' must be host:port`);
    return { host: at[1]!, port: Number(at[2]) };
  });
}

export interface ClusterAddress {
  nodes: Array<{ host: string; port: number }>;
  /** credentials and TLS, given to every node's connection */
  nodeOptions: RedisOptions;
}

/**
 * The Redis Cluster form `redis+cluster://[[user]:password@]host:port[,host:port…]` (`rediss+cluster://` for TLS):
 * the listed nodes are the seeds, the client learns the rest (and every failover) from the cluster itself. A cluster
 * has one database: no `/db`. Null for other forms.
 */
export function clusterAddress(url: string): ClusterAddress | null {
  const m = /^(rediss?)\+cluster:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+?)\/?$/.exec(url.trim());
  if (!m) {
    if (/^rediss?\+cluster:/.test(url.trim())) throw new Error('REDIS_URL: a Cluster URL is redis+cluster://[:password@]host:port[,host:port…] (no database number)');
    return null;
  }
  const password = m[3] !== undefined ? decodeURIComponent(m[3]) : undefined;
  const username = m[2] ? decodeURIComponent(m[2]) : undefined;
  return {
    nodes: hostPorts(m[4]!, 'cluster node'),
    nodeOptions: { ...(password !== undefined ? { password } : {}), ...(username ? { username } : {}), ...(m[1] === 'rediss' ? { tls: {} } : {}) },
  };
}

export function isClusterUrl(url: string | null | undefined): boolean {
  return typeof url === 'string' && /^rediss?\+cluster:/.test(url.trim());
}

/**
 * The key prefix to use with `url`. In a Redis Cluster the keys a script or a transaction touches must live in one
 * hash slot: the prefix is then wrapped in a hash tag (`gatehouse:` → `{gatehouse:}`), so every key of one
 * deployment shares a slot. A prefix that carries a hash tag already is kept as it is.
 */
export function keyPrefixFor(url: string | null | undefined, prefix: string): string {
  if (!isClusterUrl(url) || /\{[^}]+\}/.test(prefix)) return prefix;
  return `{${prefix}}`;
}

function openCluster(address: ClusterAddress, options: RedisOptions): Cluster {
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...perNode } = options;
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...perNode, ...address.nodeOptions },
    // the slot map is refreshed as soon as a node answers MOVED or a connection fails, and every few seconds anyway
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: 5000,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
  };
  if (address.nodeOptions.tls) clusterOptions.dnsLookup = (host, callback) => callback(null, host);
  return new Cluster(address.nodes, clusterOptions);
}

/** A connection for any REDIS_URL form (one server, Sentinel, Cluster), with the caller's options. */
export function openRedis(url: string, options: RedisOptions = {}): RedisClient {
  const cluster = clusterAddress(url);
  if (cluster) return openCluster(cluster, options);
  const sentinel = sentinelOptions(url);
  return sentinel ? new Redis({ ...options, ...sentinel }) : new Redis(url, options);
}
