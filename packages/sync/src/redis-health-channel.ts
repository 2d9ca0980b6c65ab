import { keyPrefixFor, openRedis, type RedisClient } from './redis-connection';
import type { BusSubscription } from './bus';
import { parseManualHealthCommand, type DataPlaneHealthReport, type HealthChannel, type ManualHealthCommand } from './health-channel';
import { silentLogger, type SyncLogger } from './logger';
import { DEFAULT_REDIS_PREFIX } from './redis-bus-keys';

export interface RedisHealthChannelOptions {
  url: string;
  prefix?: string;
  logger?: SyncLogger;
}

export function redisHealthKeys(prefix = DEFAULT_REDIS_PREFIX) {
  return {
    /** hash: data plane id → health report JSON */
    reports: `${prefix}health`,
    /** manual healthy/unhealthy commands */
    manual: `${prefix}health:manual`,
  };
}

/** Report rows live at most this long without a refresh (a stopped data plane's row goes away by itself). */
const REPORTS_TTL_SECONDS = 3600;

/** The health channel over Redis: reports in one hash, manual commands over pub/sub. */
export class RedisHealthChannel implements HealthChannel {
  readonly keys: ReturnType<typeof redisHealthKeys>;
  private readonly commands: RedisClient;
  private readonly subscribers = new Set<RedisClient>();
  private readonly logger: SyncLogger;

  constructor(private readonly options: RedisHealthChannelOptions) {
    this.keys = redisHealthKeys(keyPrefixFor(options.url, options.prefix ?? DEFAULT_REDIS_PREFIX));
    this.logger = options.logger ?? silentLogger;
    this.commands = this.connect();
  }

  private connect(extra: { autoResubscribe?: boolean } = {}): RedisClient {
    const connection = openRedis(this.options.url, {
      ...extra,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt - 1, 10), 2000),
      connectTimeout: 5000,
      commandTimeout: 5000,
    });
    connection.on('error', () => {});
    return connection;
  }

  async report(report: DataPlaneHealthReport): Promise<void> {
    await this.commands.multi().hset(this.keys.reports, report.data_plane_id, JSON.stringify(report)).expire(this.keys.reports, REPORTS_TTL_SECONDS).exec();
  }

  async list(maxAgeSeconds: number): Promise<DataPlaneHealthReport[]> {
    const rows = await this.commands.hgetall(this.keys.reports);
    const cutoff = Math.floor(Date.now() / 1000) - maxAgeSeconds;
    const out: DataPlaneHealthReport[] = [];
    for (const text of Object.values(rows)) {
      try {
        const report = JSON.parse(text) as DataPlaneHealthReport;
        if (report.at >= cutoff) out.push(report);
      } catch {}
    }
    return out.sort((a, b) => b.at - a.at);
  }

  async publishManual(command: ManualHealthCommand): Promise<void> {
    await this.commands.publish(this.keys.manual, JSON.stringify(command));
  }

  /**
   * Subscribes on every (re)connection, so a data plane started while Redis is down hears commands once it is back.
   * Resolves after the first subscription, or at once when Redis cannot be reached yet.
   */
  async subscribeManual(handler: (command: ManualHealthCommand) => void): Promise<BusSubscription> {
    const connection = this.connect({ autoResubscribe: false });
    this.subscribers.add(connection);
    connection.on('message', (channel: string, message: string) => {
      if (channel !== this.keys.manual) return;
      const command = parseManualHealthCommand(message);
      if (command === null) return this.logger.warn('ignoring a malformed health command', { channel });
      handler(command);
    });
    const first = new Promise<void>((resolve) => {
      connection.on('ready', () => {
        connection.subscribe(this.keys.manual).then(
          () => resolve(),
          (error: Error) => this.logger.warn('health subscription failed; retrying on the next connection', { error: error.message }),
        );
      });
      connection.once('error', () => resolve());
    });
    await first;
    return {
      close: async () => {
        this.subscribers.delete(connection);
        connection.disconnect();
      },
    };
  }

  async close(): Promise<void> {
    for (const connection of this.subscribers) connection.disconnect();
    this.subscribers.clear();
    this.commands.disconnect();
  }
}
