import { Redis } from 'ioredis';
import type { RateLimitingRedisConfig } from './schema';

/**
 * Connections of plugins configured with their own Redis (`config.redis.host`), one per distinct server and
 * credentials, opened on first use and kept while the process runs. A command in flight when the connection drops
 * fails instead of waiting for the reconnection (the policy fails fast and `fault_tolerant` decides); the client
 * reconnects in the background.
 */
export class RedisConnections {
  private readonly clients = new Map<string, Redis>();

  get(settings: RateLimitingRedisConfig): Redis {
    const key = JSON.stringify([settings.host, settings.port, settings.username, settings.password, settings.database, settings.ssl, settings.ssl_verify, settings.server_name]);
    let client = this.clients.get(key);
    if (client === undefined) {
      client = new Redis({
        host: settings.host ?? '127.0.0.1',
        port: settings.port,
        username: settings.username ?? undefined,
        password: settings.password ?? undefined,
        db: settings.database,
        connectTimeout: settings.timeout,
        maxRetriesPerRequest: 0,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
        tls: settings.ssl ? { rejectUnauthorized: settings.ssl_verify, servername: settings.server_name ?? settings.host ?? undefined } : undefined,
      });
      // errors are reported by the requests that meet them
      client.on('error', () => undefined);
      this.clients.set(key, client);
    }
    return client;
  }

  /** Closes every connection (process shutdown, tests). */
  close(): void {
    for (const client of this.clients.values()) client.disconnect();
    this.clients.clear();
  }
}
