// Failover drills: `pnpm exec tsx deploy/drills/failover.ts [sentinel|cluster|control-plane …]` (all three by default).
// Each starts its own Redis (a Sentinel pair, a 3-master Redis Cluster with replicas, or one server), two control planes
// on one new database, two data planes and an upstream, all as local processes; drives requests through both data
// planes and writes through both control planes; kills a part with SIGKILL (by PID) and prints failed requests, lost
// acknowledged writes and seconds to converge. Needs redis-server, redis-sentinel, redis-cli and the local Postgres.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { keyPrefixFor } from '@gatehouse/sync';
import {
  AdminWriter,
  convergence,
  freePort,
  missingRoutes,
  ServeLoad,
  spawnProcess,
  startEchoUpstream,
  startRedisCluster,
  startRedisServer,
  VersionWatch,
  type EchoUpstream,
} from '@gatehouse/testkit';
import { startLocalCluster, type LocalCluster } from './local-cluster';

interface Fault {
  /** what to kill and how to tell the fault is over (a promotion); resolves with the seconds the recovery took */
  inject(cluster: LocalCluster): Promise<number | null>;
  stop(): Promise<void>;
}

interface Outcome {
  drill: string;
  requests: number;
  failedRequests: number;
  acknowledged: number;
  refused: number;
  lost: number;
  regressions: number;
  recoveredS: number | null;
  publicationResumedS: number;
  convergedS: number;
  /** seconds from the writers' stop to every acknowledged write served */
  lagS: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const since = (at: number) => Number(((Date.now() - at) / 1000).toFixed(1));

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await pause(100);
  }
}

async function statusVersion(url: string): Promise<number> {
  const status = (await (await fetch(`${url}/status`)).json()) as { config_version: number | null };
  return status.config_version ?? -1;
}

/** resolves once every data plane serves the config version of the database (asked of a running control plane) */
async function caughtUp(cluster: LocalCluster): Promise<void> {
  const survivor = cluster.controlPlanes.find((cp) => cp.process.isRunning())!;
  const version = await statusVersion(survivor.statusUrl);
  await waitFor(`every data plane at version ${version}`, async () => (await Promise.all(cluster.dataPlanes.map((dp) => statusVersion(dp.statusUrl)))).every((v) => v >= version), 60_000);
}

async function drill(name: string, redisUrl: string, fault: Fault, upstream: EchoUpstream): Promise<Outcome> {
  const cluster = await startLocalCluster(redisUrl);
  try {
    const [first] = cluster.controlPlanes;
    const proxies = cluster.dataPlanes.map((dp) => dp.url);
    if ((await post(`${first!.url}/services`, { name: 'echo', url: upstream.url })) !== 201) throw new Error('cannot create the service');
    if ((await post(`${first!.url}/services/echo/routes`, { name: 'steady', paths: ['/steady'] })) !== 201) throw new Error('cannot create the route');
    await convergence(proxies, ['/steady'], 60_000);
    const load = new ServeLoad(proxies.map((p) => `${p}/steady`), 200, 10);
    const watch = new VersionWatch(cluster.dataPlanes.map((dp) => dp.statusUrl));
    const writers = cluster.controlPlanes.map((cp, i) => new AdminWriter(() => [cp.url], 'echo', `${name}-cp${i + 1}`, 50));
    await pause(3000);
    const faultAt = Date.now();
    const recoveredS = await fault.inject(cluster);
    // a write made now, through a control plane still running, reaching every data plane: publication has resumed
    const survivor = cluster.controlPlanes.find((cp) => cp.process.isRunning())!;
    if ((await post(`${survivor.url}/services/echo/routes`, { name: `${name}-marker`, paths: [`/${name}-marker`] })) !== 201) throw new Error('the marker write failed');
    await convergence(proxies, [`/${name}-marker`], 60_000);
    const publicationResumedS = since(faultAt);
    await pause(3000);
    const written = await Promise.all(writers.map((w) => w.stop()));
    const acknowledged = written.flatMap((w) => w.acknowledged);
    let convergedS: number;
    let lagS = Number.NaN;
    let lost = 0;
    try {
      const stoppedAt = Date.now();
      await caughtUp(cluster);
      lagS = since(stoppedAt);
      convergedS = since(faultAt);
      // the version says the data planes are current; the routes say that what was acknowledged is in it
      await convergence(proxies, acknowledged, 60_000);
    } catch {
      lost = new Set((await missingRoutes(proxies, acknowledged)).map((target) => target.replace(/^http:\/\/[^/]+/, ''))).size;
      convergedS = Number.NaN;
    }
    const served = await load.stop();
    const regressions = await watch.stop();
    return {
      drill: name,
      requests: served.ok + served.failures.length,
      failedRequests: served.failures.length,
      acknowledged: acknowledged.length,
      refused: written.reduce((n, w) => n + w.unacknowledged, 0),
      lost,
      regressions: regressions.length,
      recoveredS,
      publicationResumedS,
      convergedS,
      lagS,
    };
  } finally {
    await cluster.stop();
    await fault.stop();
  }
}

async function sentinelPair(): Promise<{ url: string; fault: Fault }> {
  const master = await startRedisServer();
  const replica = await startRedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-drill-sentinel-'));
  writeFileSync(join(dir, 'sentinel.conf'), [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor drill 127.0.0.1 ${master.port} 1`, 'sentinel down-after-milliseconds drill 1000', 'sentinel failover-timeout drill 5000', ''].join('\n'));
  const sentinel = await spawnProcess('redis-sentinel', [join(dir, 'sentinel.conf')], { name: 'redis-sentinel', readyPattern: /\+monitor master/, timeoutMs: 15_000 });
  const masterPort = async () => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      const addr = (await client.call('SENTINEL', 'get-master-addr-by-name', 'drill')) as [string, string] | null;
      return addr ? Number(addr[1]) : null;
    } finally {
      client.disconnect();
    }
  };
  await waitFor('the replica in sync', async () => {
    const client = new Redis(replica.url, { maxRetriesPerRequest: 1 });
    try {
      return (await client.info('replication')).includes('master_link_status:up');
    } finally {
      client.disconnect();
    }
  }, 20_000);
  return {
    url: `redis+sentinel://127.0.0.1:${port}/drill`,
    fault: {
      async inject() {
        const at = Date.now();
        process.kill(master.pid, 'SIGKILL');
        await waitFor('the sentinel to promote the replica', async () => (await masterPort()) === replica.port, 60_000);
        return since(at);
      },
      async stop() {
        await sentinel.stop();
        await Promise.all([replica.stop(), master.stop()]);
        rmSync(dir, { recursive: true, force: true });
      },
    },
  };
}

async function redisCluster(): Promise<{ url: string; fault: Fault }> {
  const nodes = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  return {
    url: nodes.url,
    fault: {
      async inject(cluster) {
        const key = `${keyPrefixFor(nodes.url, cluster.redisPrefix)}snapshot:head`;
        const master = await nodes.masterOf(key);
        const at = Date.now();
        nodes.kill(master);
        const promoted = await nodes.waitHealthy(key, 60_000);
        if (promoted.port === master.port) throw new Error('the killed master still owns the slot');
        return since(at);
      },
      stop: () => nodes.stop(),
    },
  };
}

async function oneRedis(): Promise<{ url: string; fault: Fault }> {
  const server = await startRedisServer();
  return {
    url: server.url,
    fault: {
      async inject(cluster) {
        const victim = cluster.controlPlanes[1]!;
        victim.process.signal('SIGKILL');
        await victim.process.exited;
        return null;
      },
      stop: () => server.stop(),
    },
  };
}

const DRILLS: Record<string, () => Promise<{ url: string; fault: Fault }>> = { sentinel: sentinelPair, cluster: redisCluster, 'control-plane': oneRedis };

function print(o: Outcome): void {
  const recovered = o.recoveredS === null ? '' : `promoted ${o.recoveredS} s after the kill; `;
  process.stdout.write(
    `${o.drill}: ${o.failedRequests} of ${o.requests} requests failed; ${o.acknowledged} writes acknowledged, ${o.lost} lost ` +
      `(${o.refused} refused while a part was down); ${o.regressions} steps back to an older config; ${recovered}` +
      `publication resumed ${o.publicationResumedS} s after the kill; every acknowledged write served ${Number.isNaN(o.convergedS) ? 'never (see lost)' : `${o.convergedS} s after the kill (${o.lagS} s after the last write)`}\n`,
  );
}

async function main(): Promise<void> {
  const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(DRILLS);
  for (const name of chosen) if (!DRILLS[name]) throw new Error(`unknown drill '${name}' (${Object.keys(DRILLS).join(', ')})`);
  const upstream = await startEchoUpstream();
  let failed = false;
  try {
    for (const name of chosen) {
      process.stdout.write(`${name}: starting…\n`);
      const { url, fault } = await DRILLS[name]!();
      const outcome = await drill(name, url, fault, upstream);
      print(outcome);
      failed ||= outcome.failedRequests > 0 || outcome.lost > 0 || outcome.regressions > 0;
    }
  } finally {
    await upstream.close();
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
