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
import { announcementOf } from './announcement';
import { silentLogger, type SyncLogger } from './logger';
import { isSealed, parseSignedDelta, parseSignedSnapshot } from './signing';
import { SEAL_CIPHER } from './sealing';
import { MAX_KEPT_DELTAS } from './memory-bus';

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

export const DEFAULT_REDIS_PREFIX = 'gatehouse:';

/** Where the bus keeps things in Redis, for a given prefix. */
export function redisBusKeys(prefix = DEFAULT_REDIS_PREFIX) {
  return {
    /** the latest signed snapshot, JSON */
    snapshot: `${prefix}snapshot`,
    /** `{version, hash, epoch}` of the latest version (snapshot or delta), JSON: the cheap check and the guard against older publishes */
    head: `${prefix}snapshot:head`,
    /** `{version, hash, epoch}` of the stored full snapshot, JSON */
    stored: `${prefix}snapshot:stored`,
    /** sorted set: signed deltas (JSON) after the stored snapshot, scored by version */
    deltas: `${prefix}deltas`,
    /** announcements `{version, hash}` */
    channel: `${prefix}config`,
    /** hash: data plane id → report JSON */
    dataPlanes: `${prefix}data_planes`,
    /** sorted set: data plane id scored by last_seen, so expired rows can be found */
    dataPlanesSeen: `${prefix}data_planes:seen`,
  };
}

// Stores and announces in one step, so a subscriber that hears an announcement can always fetch that version,
// and a slower control plane replica never replaces a newer snapshot: a head of a later epoch (see core's epoch.ts),
// or of the same epoch and a higher version, stays. With ARGV[6] = '1' (the control plane found the head forged or
// foreign) the snapshot replaces whatever is stored. Returns 1 when stored, 0 when refused, 2 when the head is this very
// snapshot already (the same version and hash, published by another control plane): nothing is stored or announced
// again (ARGV[8] = '1' for a sealed snapshot, which does replace a stored one without ARGV[9], the sealed marker).
const PUBLISH_SCRIPT = `
local function epoch_time(e)
  if type(e) ~= 'string' then return -1 end
  local t = string.match(e, '^(%d+)%-%x+$')
  if t then return tonumber(t) end
  return -1
end
local head = redis.call('GET', KEYS[2])
if head and ARGV[6] ~= '1' then
  local ok, current = pcall(cjson.decode, head)
  if ok and type(current) == 'table' then
    local head_epoch, new_epoch = current.epoch, ARGV[5]
    if type(head_epoch) ~= 'string' then head_epoch = '' end
    local ht, nt = epoch_time(head_epoch), epoch_time(new_epoch)
    if ht > nt or (ht == nt and ht >= 0 and head_epoch > new_epoch) then return 0 end
    local same_epoch = (ht == nt) and (ht < 0 or head_epoch == new_epoch)
    if same_epoch and tonumber(current.version) and tonumber(current.version) > tonumber(ARGV[1]) then return 0 end
    -- the same version with the same content is there already (another control plane published it): announced once,
    -- unless this one is sealed and the stored one is not (an upgraded control plane replaces an earlier release's)
    if same_epoch and tonumber(current.version) == tonumber(ARGV[1]) and current.hash == ARGV[7] then
      local kept = redis.call('GET', KEYS[1])
      if ARGV[8] ~= '1' or (kept and string.find(kept, ARGV[9], 1, true)) then return 2 end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('DEL', KEYS[4])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return 1
`;

// Lua prelude: the head (KEYS[1]) decoded as 'current', its epoch as 'head_epoch' ('' for none); returns 0 when there is no head.
const READ_HEAD = `
local head = redis.call('GET', KEYS[1])
if not head then return 0 end
local ok, current = pcall(cjson.decode, head)
if not ok or type(current) ~= 'table' then return 0 end
local head_epoch = current.epoch
if type(head_epoch) ~= 'string' then head_epoch = '' end
`;

// Keeps a delta and moves the head to it, only when it continues the head: same epoch, from <= head < version.
const PUBLISH_DELTA_SCRIPT = `${READ_HEAD}
if head_epoch ~= ARGV[3] then return 0 end
local hv = tonumber(current.version)
if not hv or hv < tonumber(ARGV[1]) or hv >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[8])
if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1) end
redis.call('SET', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`;

// Stores a full snapshot without announcing it: of the head's epoch, not above the head, above the stored one.
const STORE_SNAPSHOT_SCRIPT = `${READ_HEAD}
if head_epoch ~= ARGV[2] or tonumber(current.version) < tonumber(ARGV[1]) then return 0 end
local stored = redis.call('GET', KEYS[2])
if stored then
  local ok2, s = pcall(cjson.decode, stored)
  if ok2 and type(s) == 'table' then
    local se = s.epoch
    if type(se) ~= 'string' then se = '' end
    if se == ARGV[2] and tonumber(s.version) and tonumber(s.version) >= tonumber(ARGV[1]) then return 0 end
  end
end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
return 1
`;

// Purges rows not seen since the cutoff, then returns the rest, most recently seen first.
const LIST_SCRIPT = `
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, id in ipairs(stale) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
local ids = redis.call('ZREVRANGE', KEYS[2], 0, -1)
local rows = {}
for i, id in ipairs(ids) do
  rows[i] = redis.call('HGET', KEYS[1], id) or ''
end
return rows
`;

export function redactRedisUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

function parseAnnouncement(text: string): SnapshotAnnouncement | null {
  try {
    const value = JSON.parse(text) as Partial<SnapshotAnnouncement> | null;
    if (value && Number.isSafeInteger(value.version) && typeof value.hash === 'string') {
      const announcement: SnapshotAnnouncement = { version: value.version!, hash: value.hash };
      if (typeof value.epoch === 'string') announcement.epoch = value.epoch;
      const delta = value.delta === undefined ? null : parseSignedDelta(value.delta);
      if (delta) announcement.delta = delta;
      return announcement;
    }
  } catch {}
  return null;
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
    // ioredis would resubscribe on its own, but only we know when that is done: onReconnect must come after
    // the subscription is back, or an announcement could slip between the refetch and the resubscribe.
    const connection = this.connect('subscriber', { autoResubscribe: false });
    this.subscribers.add(connection);
    const channel = this.keys.channel;
    let active = true;
    let settled = false;
    let settle!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (settle = resolve));
    const settleFirst = () => {
      if (settled) return false;
      settled = true;
      settle();
      return true;
    };

    connection.on('message', (from: string, message: string) => {
      if (!active || from !== channel) return;
      const announcement = parseAnnouncement(message);
      if (!announcement) {
        this.logger.warn('ignoring a malformed announcement', { channel });
        return;
      }
      try {
        handlers.onAnnouncement(announcement);
      } catch (error) {
        this.logger.error('announcement handler failed', { error: (error as Error).message });
      }
    });
    connection.on('ready', () => {
      connection.subscribe(channel).then(
        async () => {
          if (!active) return;
          if (settleFirst()) return;
          // the refetch goes through the command connection, which may come back a moment later
          await this.commandsReady();
          if (!active) return;
          try {
            handlers.onReconnect();
          } catch (error) {
            this.logger.error('reconnect handler failed', { error: (error as Error).message });
          }
        },
        (error: Error) => this.logger.debug?.('subscribe failed; will retry on the next connection', { error: error.message }),
      );
    });
    connection.on('error', () => settleFirst());
    connection.on('end', () => settleFirst());
    const cap = setTimeout(settleFirst, (this.connectionOptions.connectTimeout ?? 5000) + 1000);
    await firstAttempt;
    clearTimeout(cap);

    return {
      close: async () => {
        active = false;
        this.subscribers.delete(connection);
        connection.disconnect();
      },
    };
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
