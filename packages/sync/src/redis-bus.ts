import type { SignedDelta, SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
import { keyPrefixFor, openRedis, type RedisClient } from './redis-connection';
import type { RedisOptions } from 'ioredis';
import {
  DEFAULT_DATA_PLANE_TTL_SECONDS,
  type BusSubscription,
  type ConfigBus,
  type DataPlaneReport,
  type ListedDataPlane,
  type PublishOptions,
} from './bus';
import { announcementOf, parseAnnouncement } from './announcement';
import { listenForAnnouncements } from './redis-announcement-listener';
import { DEFAULT_REDIS_PREFIX, redactRedisUrl, redisBusKeys } from './redis-bus-keys';
import { LIST_SCRIPT, PUBLISH_DELTA_SCRIPT, PUBLISH_SCRIPT, STORE_SNAPSHOT_SCRIPT } from './redis-bus-scripts';
import { silentLogger, type SyncLogger } from './logger';
import { isSealed, parseSignedDelta, parseSignedSnapshot } from './signing';
import { SEAL_CIPHER } from './sealing';
import { MAX_KEPT_DELTAS } from './memory-bus';

export { DEFAULT_REDIS_PREFIX, redactRedisUrl, redisBusKeys } from './redis-bus-keys';

type Handlers = Parameters<ConfigBus['subscribe']>[0];

export interface RedisBusOptions {
  /** any REDIS_URL form: `redis://[user:pass@]host:port[/db]`, `rediss://…` for TLS, `redis+sentinel://…`, `redis+cluster://…` */
  url: string;
  /** prefix of every key and of the channel (default `gatehouse:`); wrapped in a hash tag for a Redis Cluster */
  prefix?: string;
  /** lifetime of a data plane's row after its last report (default 14 days) */
  dataPlaneTtlSeconds?: number;
  logger?: SyncLogger;
  /** reconnect backoff cap in ms (default 2000); reconnection never gives up */
  maxReconnectDelayMs?: number;
  /** ms to establish a connection (default 5000) */
  connectTimeoutMs?: number;
  /** ms before a command without an answer fails (default 5000) */
  commandTimeoutMs?: number;
  /** anything else ioredis accepts (a TLS CA, for instance); applied last */
  redisOptions?: RedisOptions;
}

/**
 * The cluster transport over Redis. One connection for commands, one per subscription (a subscribed
 * connection can do nothing else). Connections retry forever with capped backoff; commands fail fast while
 * Redis is down (`publish` and `fetchLatest` reject), subscriptions come back by themselves and then fire
 * `onReconnect`.
 */
export class RedisBus implements ConfigBus {
  readonly keys: ReturnType<typeof redisBusKeys>;
  private readonly commands: RedisClient;
  private readonly subscribers = new Set<RedisClient>();
  private readonly logger: SyncLogger;
  private readonly ttlSeconds: number;
  private readonly connectionOptions: RedisOptions;
  private closed = false;
  /** set while the command connection is known to be down: calls then fail at once instead of queueing */
  private commandsDown: { error: string } | null = null;

  constructor(private readonly options: RedisBusOptions) {
    if (!options.url) throw new Error('RedisBus needs a url');
    this.keys = redisBusKeys(keyPrefixFor(options.url, options.prefix ?? DEFAULT_REDIS_PREFIX));
    this.logger = options.logger ?? silentLogger;
    this.ttlSeconds = options.dataPlaneTtlSeconds ?? DEFAULT_DATA_PLANE_TTL_SECONDS;
    const maxDelay = options.maxReconnectDelayMs ?? 2000;
    this.connectionOptions = {
      retryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt - 1, 10), maxDelay),
      // A command waits for at most one reconnect attempt: callers hear about an outage within the backoff cap.
      maxRetriesPerRequest: 0,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      commandTimeout: options.commandTimeoutMs ?? 5000,
      ...options.redisOptions,
    };
    this.commands = this.connect('commands', {}, (down) => (this.commandsDown = down));
  }

  async publish(snapshot: SignedSnapshot, options: PublishOptions = {}): Promise<boolean> {
    this.assertOpen();
    const head = JSON.stringify(announcementOf(snapshot));
    const stored = await this.run(() =>
      this.commands.eval(
        PUBLISH_SCRIPT,
        4,
        this.keys.snapshot,
        this.keys.head,
        this.keys.stored,
        this.keys.deltas,
        String(snapshot.version),
        JSON.stringify(snapshot),
        head,
        this.keys.channel,
        snapshot.epoch ?? '',
        options.replace ? '1' : '0',
        snapshot.hash,
        isSealed(snapshot) ? '1' : '0',
        `"cipher":"${SEAL_CIPHER}"`,
      ),
    );
    if (Number(stored) === 0) {
      this.logger.debug?.('snapshot not stored: Redis holds a head of a later epoch or version', { version: snapshot.version, epoch: snapshot.epoch });
      return false;
    }
    return true;
  }

  async publishDelta(delta: SignedDelta): Promise<boolean> {
    this.assertOpen();
    const announcement = announcementOf(delta);
    const stored = await this.run(() =>
      this.commands.eval(
        PUBLISH_DELTA_SCRIPT,
        2,
        this.keys.head,
        this.keys.deltas,
        String(delta.from),
        String(delta.version),
        delta.epoch ?? '',
        JSON.stringify(delta),
        JSON.stringify(announcement),
        this.keys.channel,
        JSON.stringify({ ...announcement, delta }),
        String(MAX_KEPT_DELTAS),
      ),
    );
    return Number(stored) === 1;
  }

  async fetchDeltas(after: number): Promise<SignedDelta[]> {
    this.assertOpen();
    const rows = await this.run(() => this.commands.zrangebyscore(this.keys.deltas, `(${after}`, '+inf'));
    const deltas: SignedDelta[] = [];
    for (const row of rows) {
      const delta = parseSignedDelta(row);
      if (delta) deltas.push(delta);
    }
    return deltas.sort((a, b) => a.version - b.version);
  }

  async storeSnapshot(snapshot: SignedSnapshot): Promise<boolean> {
    this.assertOpen();
    const stored = await this.run(() =>
      this.commands.eval(
        STORE_SNAPSHOT_SCRIPT,
        4,
        this.keys.head,
        this.keys.stored,
        this.keys.snapshot,
        this.keys.deltas,
        String(snapshot.version),
        snapshot.epoch ?? '',
        JSON.stringify(snapshot),
        JSON.stringify(announcementOf(snapshot)),
      ),
    );
    return Number(stored) === 1;
  }

  async fetchLatest(): Promise<SignedSnapshot | null> {
    this.assertOpen();
    const text = await this.run(() => this.commands.get(this.keys.snapshot));
    return text === null ? null : parseSignedSnapshot(text);
  }

  async latestAnnouncement(): Promise<SnapshotAnnouncement | null> {
    this.assertOpen();
    const text = await this.run(() => this.commands.get(this.keys.head));
    return text === null ? null : parseAnnouncement(text);
  }

  /**
   * Resolves once subscribed, or as soon as Redis turns out to be unreachable (the subscription then keeps
   * trying in the background). Every later successful (re)subscription fires `onReconnect`.
   */
  async subscribe(handlers: Handlers): Promise<BusSubscription> {
    this.assertOpen();
    const connection = this.connect('subscriber', { autoResubscribe: false });
    this.subscribers.add(connection);
    return listenForAnnouncements(
      {
        connection,
        channel: this.keys.channel,
        logger: this.logger,
        connectTimeoutMs: this.connectionOptions.connectTimeout ?? 5000,
        commandsReady: () => this.commandsReady(),
        onClose: () => this.subscribers.delete(connection),
      },
      handlers,
    );
  }

  async reportDataPlane(report: DataPlaneReport): Promise<void> {
    this.assertOpen();
    await this.run(() =>
      this.commands
        .multi()
        .hset(this.keys.dataPlanes, report.id, JSON.stringify(report))
        .zadd(this.keys.dataPlanesSeen, report.last_seen, report.id)
        .expire(this.keys.dataPlanes, this.ttlSeconds)
        .expire(this.keys.dataPlanesSeen, this.ttlSeconds)
        .exec(),
    );
  }

  async listDataPlanes(): Promise<ListedDataPlane[]> {
    this.assertOpen();
    const nowSeconds = Math.floor(Date.now() / 1000);
    const rows = (await this.run(() =>
      this.commands.eval(LIST_SCRIPT, 2, this.keys.dataPlanes, this.keys.dataPlanesSeen, String(nowSeconds - this.ttlSeconds)),
    )) as string[];
    const listed: ListedDataPlane[] = [];
    for (const row of rows) {
      try {
        const report = JSON.parse(row) as DataPlaneReport;
        listed.push({ ...report, ttl: Math.max(0, this.ttlSeconds - (nowSeconds - report.last_seen)) });
      } catch {}
    }
    return listed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.subscribers) connection.disconnect();
    this.subscribers.clear();
    this.commands.disconnect();
  }

  /** Runs a command, failing at once while Redis is known to be down, with an error that says so. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const where = redactRedisUrl(this.options.url);
    const known = this.downReason();
    if (known) throw new Error(`Redis unreachable at ${where}: ${known}`);
    try {
      return await command();
    } catch (error) {
      const e = error as Error;
      if (e.name === 'MaxRetriesPerRequestError' || /Connection is closed|max retries per request/i.test(e.message)) {
        throw new Error(`Redis unreachable at ${where}: ${this.downReason() ?? e.message}`);
      }
      throw error;
    }
  }

  /** Resolves once the command connection is usable, or after the connect timeout (the caller then just tries). */
  private commandsReady(): Promise<void> {
    if (this.commands.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.commands.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, this.connectionOptions.connectTimeout ?? 5000);
      this.commands.once('ready', done);
    });
  }

  private downReason(): string | null {
    // a Cluster reports a failed node as an error while it stays ready (its slots move to a promoted replica)
    if (this.commands.status === 'ready') return null;
    return this.commandsDown?.error ?? null;
  }

  private connect(role: string, extra: RedisOptions = {}, onState?: (down: { error: string } | null) => void): RedisClient {
    const connection = openRedis(this.options.url, { ...this.connectionOptions, ...extra });
    const where = redactRedisUrl(this.options.url);
    let down = false;
    // Without an error listener ioredis prints every failed attempt; one line per outage is enough.
    connection.on('error', (error: Error) => {
      if (this.closed) return;
      onState?.({ error: error.message });
      if (down) return;
      down = true;
      this.logger.warn(`Redis unreachable (${role} connection); retrying`, { url: where, error: error.message });
    });
    connection.on('ready', () => {
      onState?.(null);
      if (!down) return;
      down = false;
      this.logger.info(`Redis reachable again (${role} connection)`, { url: where });
    });
    return connection;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('config bus is closed');
  }
}
