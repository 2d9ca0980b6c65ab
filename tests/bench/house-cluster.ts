// One small cluster of the `house` scenario, run from one tree's sources: a control plane over a Postgres database of
// its own and a data plane over Redis (a key prefix of its own), each `node --import tsx packages/cli/src/main.ts`
// started in that tree with settings both the current tree and the base commit read (DATABASE_URL, REDIS_URL,
// GATEHOUSE_REDIS_PREFIX, GATEHOUSE_CLUSTER_SECRET, GATEHOUSE_ADMIN_LISTEN, GATEHOUSE_PROXY_LISTEN, …), not through
// tests/e2e/support/topology.ts, which differs between the two.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePorts,
  SHARED_REDIS_URL,
  spawnProcess,
  uniqueRedisPrefix,
  type SpawnedProcess,
  type TestDatabase,
} from '@gatehouse/testkit';
import { processTree } from './interleaved';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** the key-auth key of loaded consumer `i` */
export const houseKeyOf = (i: number) => `house-key-${i}-${'k'.repeat(12)}`;

/** A running cluster of one tree. */
export interface HouseCluster {
  /** what the tables call it */
  label: string;
  adminUrl: string;
  proxyUrl: string;
  controlPlane: SpawnedProcess;
  dataPlane: SpawnedProcess;
  /** an admin request over a keep-alive pool; the answer's status and parsed body */
  admin(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** a GET of the bench route with `apikey`; the status */
  probe(apikey: string): Promise<number>;
  /** stops both processes, drops the database, deletes the Redis prefix and the data directories */
  stop(): Promise<void>;
}

/** Starts `gatehouse <command>` from the tree at `root`, resolving once its output matches `ready`. */
function startNode(root: string, label: string, command: 'control-plane' | 'data-plane', env: NodeJS.ProcessEnv, ready: RegExp): Promise<SpawnedProcess> {
  return spawnProcess(process.execPath, ['--import', 'tsx', join(root, 'packages/cli/src/main.ts'), command], {
    name: `${label} ${command}`,
    cwd: root,
    env: { GATEHOUSE_LOG_LEVEL: 'error', ...env },
    readyPattern: ready,
    timeoutMs: Number(process.env.BENCH_START_SECONDS ?? 30) * 1000 * 4,
  });
}

/** A control plane and a data plane of the tree at `root`, started and answering. */
export async function startHouseCluster(root: string, label: string): Promise<HouseCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-house-'));
  const prefix = uniqueRedisPrefix('bench-house');
  const [adminPort, proxyPort, statusPort] = (await freePorts(3)) as [number, number, number];
  const common = {
    REDIS_URL: SHARED_REDIS_URL,
    GATEHOUSE_REDIS_PREFIX: prefix,
    GATEHOUSE_CLUSTER_SECRET: randomBytes(16).toString('hex'),
    GATEHOUSE_PROXY_TLS_LISTEN: 'off',
  };
  let database: TestDatabase | null = null;
  const started: SpawnedProcess[] = [];
  const pool = new Pool(`http://127.0.0.1:${adminPort}`, { connections: 4 });
  const proxyPool = new Pool(`http://127.0.0.1:${proxyPort}`, { connections: 2 });
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await Promise.all([pool.close(), proxyPool.close()]);
    await database?.drop();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    database = await createTestDatabase({ prefix: 'gh_bench_house' });
    const cpEnv = { ...common, DATABASE_URL: database.url, GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`, GATEHOUSE_DATA_DIR: join(dir, 'cp') };
    started.push(await startNode(root, label, 'control-plane', cpEnv, /admin API listening/));
    const dpEnv = {
      ...common,
      GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
      GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
      GATEHOUSE_DATA_DIR: join(dir, 'dp'),
      GATEHOUSE_DATA_PLANE_ID: `bench-house-${label.replace(/\W+/g, '-')}`,
      // one proxy process with no access log: what is measured is the proxy's own work
      GATEHOUSE_WORKERS: '1',
      GATEHOUSE_ACCESS_LOG: 'off',
    };
    started.push(await startNode(root, label, 'data-plane', dpEnv, /status API listening/));
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  const [controlPlane, dataPlane] = started as [SpawnedProcess, SpawnedProcess];
  return {
    label,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    controlPlane,
    dataPlane,
    async admin(method, path, body) {
      const res = await pool.request({ path, method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.body.text();
      return { status: res.statusCode, body: text ? JSON.parse(text) : null };
    },
    async probe(apikey) {
      const res = await proxyPool.request({ path: '/bench', method: 'GET', headers: { apikey } });
      await res.body.dump();
      return res.statusCode;
    },
    stop,
  };
}

/** The declarative document of the scenario: one key-auth route to `upstreamUrl`, `consumers` consumers with a key each. */
export function houseDocument(consumers: number, upstreamUrl: string): unknown {
  const list = [];
  for (let i = 0; i < consumers; i++) list.push({ username: `house-user-${i}`, keyauth_credentials: [{ key: houseKeyOf(i) }] });
  return {
    _format_version: '3.0',
    services: [{ name: 'bench', url: `${upstreamUrl}/bench`, routes: [{ name: 'bench', paths: ['/bench'], strip_path: true, plugins: [{ name: 'key-auth' }] }] }],
    consumers: list,
  };
}

/** Polls the data plane every `everyMs` until it answers 200 with `apikey`; fails after `timeoutMs`. */
export async function waitServed(cluster: HouseCluster, apikey: string, timeoutMs: number, everyMs = 2): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await cluster.probe(apikey)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${cluster.label}: the data plane did not serve key ${apikey} within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** What loading the document cost one cluster. */
export interface HouseLoad {
  /** POST /config, request to answer */
  postSeconds: number;
  /** from the answer until the data plane served the last consumer's key */
  servedSeconds: number;
}

/** POST /config of `document` (of `consumers` consumers) to the control plane, then waits until the data plane serves the last key. */
export async function loadHouse(cluster: HouseCluster, document: unknown, consumers: number): Promise<HouseLoad> {
  const started = performance.now();
  const res = await cluster.admin('POST', '/config', document);
  if (res.status !== 201 && res.status !== 200) throw new Error(`${cluster.label}: POST /config answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const posted = performance.now();
  await waitServed(cluster, houseKeyOf(consumers - 1), 600_000, 20);
  return { postSeconds: (posted - started) / 1000, servedSeconds: (performance.now() - posted) / 1000 };
}

/** Resident memory of a process and its descendants, MiB; NaN where /proc cannot be read. */
export function treeRssMb(pid: number): number {
  try {
    const kb = processTree(pid).reduce((sum, p) => sum + Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0), 0);
    return kb / 1024;
  } catch {
    return NaN;
  }
}
