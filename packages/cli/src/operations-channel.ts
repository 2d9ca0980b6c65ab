import { createHmac, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { openRedis } from '@gatehouse/sync';
import type { LogLevelControl, LogLevelScope } from '@gatehouse/control-plane';
import { currentLogLevel, isKongLogLevel, KONG_LOG_LEVELS, setRuntimeLogLevel, type KongLogLevel, type Logger } from './logger';
import type { Role, Settings } from './settings';

/** A run-time change every node of a scope applies (Kong's cluster events): today, the log level. */
interface LogLevelMessage {
  kind: 'log-level';
  level: KongLogLevel;
  timeout: number;
  scope: Exclude<LogLevelScope, 'node'>;
  /** the node that made the change (it applied it already) */
  from: string;
}

/** Node operations between the nodes: Redis pub/sub (signed with the cluster secret), or in one process nothing to reach. */
export interface OperationsChannel {
  publish(message: LogLevelMessage): Promise<void>;
  close(): Promise<void>;
}

const isLevel = isKongLogLevel;

function sign(secret: string, body: string): string {
  return createHmac('sha256', `operations:${secret}`).update(body).digest('base64url');
}

/** The message a signed envelope carries, or null when it is not one (bad signature, unknown shape). */
function open(secret: string, raw: string): LogLevelMessage | null {
  try {
    const envelope = JSON.parse(raw) as { body?: unknown; sig?: unknown };
    if (typeof envelope.body !== 'string' || typeof envelope.sig !== 'string') return null;
    const want = Buffer.from(sign(secret, envelope.body));
    const got = Buffer.from(envelope.sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    const m = JSON.parse(envelope.body) as Partial<LogLevelMessage>;
    if (m.kind !== 'log-level' || !isLevel(m.level) || typeof m.timeout !== 'number' || (m.scope !== 'cluster' && m.scope !== 'control_planes') || typeof m.from !== 'string') return null;
    return m as LogLevelMessage;
  } catch {
    return null;
  }
}

/** Whether a node of `role` applies a change sent to `scope`. */
export function appliesTo(scope: LogLevelMessage['scope'], role: Role): boolean {
  return scope === 'cluster' || role !== 'data_plane';
}

/**
 * Opens the channel and applies what other nodes send: every node on the bus takes `cluster` changes, control planes
 * (and `start` nodes) `control_planes` ones.
 */
export function openOperationsChannel(settings: Settings, secret: string, nodeId: string, log: Logger): OperationsChannel {
  if (!settings.redisUrl) {
    const local = new EventEmitter();
    return { publish: async (m) => void local.emit('message', m), close: async () => void local.removeAllListeners() };
  }
  const channel = `${settings.redisPrefix}operations`;
  const pub = openRedis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  const sub = openRedis(settings.redisUrl, { retryStrategy: (n) => Math.min(n * 100, 2000) });
  pub.on('error', () => {});
  sub.on('error', () => {});
  sub.on('message', (_channel: string, raw: string) => {
    const m = open(secret, raw);
    if (m === null) return log.warn('operations channel: message refused (unsigned, signed with another secret, or malformed)');
    if (m.from === nodeId || !appliesTo(m.scope, settings.role)) return;
    setRuntimeLogLevel(m.level, m.timeout);
    log.warn('log level changed', { log_level: m.level, timeout: m.timeout, from: m.from });
  });
  sub.subscribe(channel).catch((err: unknown) => log.warn('operations channel unavailable', { error: err instanceof Error ? err.message : String(err) }));
  return {
    publish: async (m) => {
      const body = JSON.stringify(m);
      await pub.publish(channel, JSON.stringify({ body, sig: sign(secret, body) }));
    },
    close: async () => {
      sub.disconnect();
      pub.disconnect();
    },
  };
}

/** The admin API's view of the node's log level: changes apply here, then travel the channel. */
export function logLevelControl(channel: OperationsChannel, nodeId: string, databaseOff: boolean): LogLevelControl {
  return {
    databaseOff,
    levels: Object.keys(KONG_LOG_LEVELS),
    current: currentLogLevel,
    change: async (level, timeout, scope) => {
      if (!isLevel(level)) throw new Error(`unknown log level: ${level}`);
      setRuntimeLogLevel(level, timeout);
      if (scope !== 'node') await channel.publish({ kind: 'log-level', level, timeout, scope, from: nodeId });
    },
  };
}
