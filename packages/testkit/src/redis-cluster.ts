import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort } from './ports';
import { startRedisServer, type RedisServerHandle } from './redis';

const run = promisify(execFile);

export interface RedisClusterHandle {
  /** `redis+cluster://127.0.0.1:<port>,…` listing every node */
  url: string;
  nodes: RedisServerHandle[];
  /** the node that is master of the slot of `key` now (asked of a running node) */
  masterOf(key: string): Promise<RedisServerHandle>;
  /** kills the node by its PID with SIGKILL, as a crashed machine */
  kill(node: RedisServerHandle): void;
  /** resolves once a running node says the cluster is ok and `key`'s slot has a running master */
  waitHealthy(key: string, timeoutMs?: number): Promise<RedisServerHandle>;
  /** stops every node by its PID */
  stop(): Promise<void>;
}

async function ask<T>(node: RedisServerHandle, f: (r: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await f(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * One cluster node, its cluster bus on a free port of its own (by default Redis takes the port 10000 above the
 * client port, which another process may hold); a port taken between choosing and binding it is chosen again.
 */
async function startClusterNode(args: string[], attempts = 3): Promise<RedisServerHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisServer({ extraArgs: [...args, '--cluster-port', String(await freePort())] });
    } catch (err) {
      if (attempt >= attempts || !/Address already in use/.test(String(err))) throw err;
    }
  }
}

/**
 * Starts a Redis Cluster of its own: `masters` redis-server processes with cluster mode on (and `replicasPerMaster`
 * replicas of each), on free ports, joined with `redis-cli --cluster create`; a failed node is detected after one
 * second. Nothing is persisted. Stopped by PID.
 */
export async function startRedisCluster(options: { masters?: number; replicasPerMaster?: number; nodeTimeoutMs?: number } = {}): Promise<RedisClusterHandle> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000), '--cluster-replica-validity-factor', '0'];
  const starts = await Promise.allSettled(Array.from({ length: masters * (1 + replicas) }, () => startClusterNode(args)));
  const nodes = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    // the nodes that did start must not outlive the failure (nor keep the test process alive)
    await Promise.all(nodes.map((n) => n.stop()));
    throw failed.reason;
  }
  const stop = async () => void (await Promise.all(nodes.map((n) => n.stop())));
  try {
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  const byPort = new Map(nodes.map((n) => [n.port, n]));
  const masterOf = async (key: string) => {
    const alive = nodes.find((n) => n.isRunning());
    if (!alive) throw new Error('no cluster node is running');
    // one connection for both questions: a test asking for many keys at once opens half as many
    const [slot, ranges] = await ask(alive, async (r) => [(await r.call('CLUSTER', 'KEYSLOT', key)) as number, (await r.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>] as const);
    const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
    const node = owner ? byPort.get(Number(owner[2][1])) : undefined;
    if (!node) throw new Error(`no master known for slot ${slot}`);
    return node;
  };
  const healthy = async (key: string) => {
    const master = await masterOf(key);
    if (!master.isRunning()) return null;
    for (const n of nodes.filter((x) => x.isRunning())) {
      const info = await ask(n, (r) => r.call('CLUSTER', 'INFO') as Promise<string>);
      if (!info.includes('cluster_state:ok')) return null;
    }
    return master;
  };
  const handle: RedisClusterHandle = {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    masterOf,
    kill: (node) => {
      if (node.pid > 0) process.kill(node.pid, 'SIGKILL');
    },
    async waitHealthy(key, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const master = await healthy(key).catch(() => null);
        if (master) return master;
        if (Date.now() > until) throw new Error(`the Redis Cluster did not become healthy within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop,
  };
  try {
    await handle.waitHealthy('gatehouse', 30_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return handle;
}

/** A plain connection to a Redis Cluster URL of `startRedisCluster` (for assertions in tests). */
export function openRedisForTest(url: string): Cluster {
  const nodes = url.replace(/^redis\+cluster:\/\//, '').split(',').map((hp) => ({ host: hp.split(':')[0]!, port: Number(hp.split(':')[1]) }));
  const cluster = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  cluster.on('error', () => {});
  return cluster;
}
