import { Redis, type RedisOptions } from 'ioredis';

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
  const sentinels = m[4]!.split(',').map((hostPort) => {
    const at = /^\[?([^\]]+?)\]?:(\d+)$/.exec(hostPort.trim());
    if (!at) throw new Error(`REDIS_URL: sentinel '${hostPort}' must be host:port`);
    return { host: at[1]!, port: Number(at[2]) };
  });
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

/** A connection for any REDIS_URL form, with the caller's options. */
export function openRedis(url: string, options: RedisOptions = {}): Redis {
  const sentinel = sentinelOptions(url);
  return sentinel ? new Redis({ ...options, ...sentinel }) : new Redis(url, options);
}
