import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports';
import { spawnProcess, type SpawnedProcess } from './processes';

/** The shared Redis the integration tests use (never stopped by a test). */
export const SHARED_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface RedisServerHandle {
  url: string;
  port: number;
  /** PID of the running redis-server (changes after `restart()`) */
  readonly pid: number;
  isRunning(): boolean;
  /** stops this server by its PID (SIGTERM, then SIGKILL); data is not kept */
  stop(): Promise<void>;
  /** starts it again on the same port (stopping it first if it is running); it comes back empty */
  restart(): Promise<void>;
}

/**
 * Starts a throwaway redis-server of its own, for fault tests that stop and restart Redis. No persistence:
 * a restarted server is empty, like a Redis that lost its data.
 */
export async function startRedisServer(
  options: { port?: number; timeoutMs?: number; /** more redis-server arguments, e.g. ['--requirepass', 'pw'] */ extraArgs?: string[] } = {},
): Promise<RedisServerHandle> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'notice', ...(options.extraArgs ?? [])];
  const launch = () => {
    mkdirSync(dir, { recursive: true });
    return spawnProcess('redis-server', args, {
      name: `redis-server :${port}`,
      readyPattern: /Ready to accept connections/,
      timeoutMs: options.timeoutMs ?? 10000,
    });
  };
  let server: SpawnedProcess | null = await launch();
  const stop = async () => {
    if (server) {
      await server.stop(3000);
      server = null;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return server?.pid ?? -1;
    },
    isRunning: () => server?.isRunning() ?? false,
    stop,
    async restart() {
      await stop();
      server = await launch();
    },
  };
}

/** A key prefix no other test uses, e.g. `gatehouse-test:sync:1f2e3d4c:`. */
export function uniqueRedisPrefix(label = 'test'): string {
  return `gatehouse-test:${label}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under `prefix` (cleanup after a test that used `uniqueRedisPrefix`). */
export async function deleteRedisPrefix(url: string, prefix: string): Promise<number> {
  if (!prefix) throw new Error('refusing to delete keys without a prefix');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {});
  let deleted = 0;
  try {
    await redis.connect();
    let cursor = '0';
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
