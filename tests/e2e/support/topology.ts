// Runs Gatehouse as real processes in the two topologies every proxy behaviour is tested in:
//   embedded: `gatehouse start` (PGlite, in-process bus), one process;
//   cluster:  `gatehouse control-plane` on a throwaway Postgres database + N × `gatehouse data-plane`, over Redis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePorts,
  gatehouseNodeArgs,
  SHARED_REDIS_URL,
  spawnProcess,
  uniqueRedisPrefix,
  type SpawnedProcess,
  type TestDatabase,
} from '@gatehouse/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type TopologyName = 'embedded' | 'cluster';
export const TOPOLOGIES: TopologyName[] = ['embedded', 'cluster'];

export interface DataPlaneHandle {
  proxyUrl: string;
  /** the data plane's TLS listener (`https://127.0.0.1:<port>`) */
  proxyTlsUrl: string;
  statusUrl: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  process: SpawnedProcess;
}

export interface Topology {
  name: TopologyName;
  adminUrl: string;
  /** every data plane (one in embedded mode) */
  dataPlanes: DataPlaneHandle[];
  /** the first data plane's proxy */
  proxyUrl: string;
  controlPlane: SpawnedProcess;
  /** every control plane on the one Postgres database (cluster, `controlPlanes` > 1); the first is `controlPlane` */
  controlPlanes: Array<{ adminUrl: string; process: SpawnedProcess }>;
  /** the control plane's Postgres database (cluster); null in embedded mode, whose database is PGlite */
  databaseUrl: string | null;
  /** the prefix of every Redis key and channel of the cluster; null in embedded mode, which has no Redis */
  redisPrefix: string | null;
  /** resolves once every data plane serves the control plane's current config version */
  converge(timeoutMs?: number): Promise<number>;
  /** stops one data plane and starts it again with the same data directory (disk cache) */
  restartDataPlane(index: number, env?: NodeJS.ProcessEnv): Promise<void>;
  stopControlPlane(): Promise<void>;
  startControlPlane(): Promise<void>;
  stop(): Promise<void>;
}

export interface TopologyOptions {
  dataPlanes?: number;
  /** control planes on the one database (cluster only; default 1), each with an admin API of its own */
  controlPlanes?: number;
  /** Redis for the cluster (default the shared one) */
  redisUrl?: string;
  env?: NodeJS.ProcessEnv;
  /** extra environment of the data planes only (in embedded mode, of the one process): the same for all, or per index */
  dataPlaneEnv?: NodeJS.ProcessEnv | ((index: number) => NodeJS.ProcessEnv);
  /** Kong listen flags appended to each data plane's GATEHOUSE_PROXY_LISTEN (e.g. ' http2') */
  proxyListenFlags?: string;
  /** Kong listen flags appended to each data plane's GATEHOUSE_PROXY_TLS_LISTEN (e.g. ' proxy_protocol') */
  proxyTlsListenFlags?: string;
}

function cliProcess(name: string, command: string, env: NodeJS.ProcessEnv, readyPattern: RegExp): Promise<SpawnedProcess> {
  return spawnProcess(process.execPath, gatehouseNodeArgs(command), {
    name,
    cwd: ROOT,
    // one proxy process, as these tests were written for (E2E_WORKERS=<n> runs them with more); workers.test.ts runs two
    env: { GATEHOUSE_LOG_LEVEL: 'warn', GATEHOUSE_WORKERS: process.env.E2E_WORKERS ?? '1', ...env },
    readyPattern,
    // E2E_START_TIMEOUT_MS lengthens the wait on a loaded development machine; CI keeps 60 s
    timeoutMs: Number(process.env.E2E_START_TIMEOUT_MS ?? 60_000),
  });
}

/**
 * Starts one `gatehouse <command>` process with the given environment (merged over this process's), resolving once
 * its output matches `readyPattern`; for processes outside a topology (a data plane with no Redis, for instance).
 */
export function spawnGatehouse(command: 'start' | 'control-plane' | 'data-plane', env: NodeJS.ProcessEnv, readyPattern: RegExp, name = `gatehouse ${command}`): Promise<SpawnedProcess> {
  // the default TLS port (8443) is shared by every process that does not choose one: tests choose none unless asked
  return cliProcess(name, command, { GATEHOUSE_PROXY_TLS_LISTEN: 'off', ...env }, readyPattern);
}

async function json(url: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { headers });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < until) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

function fulfilled<T>(results: Array<PromiseSettledResult<T>>): T[] {
  return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
}

function dataPlaneEnvOf(opts: TopologyOptions, index: number): NodeJS.ProcessEnv {
  return typeof opts.dataPlaneEnv === 'function' ? opts.dataPlaneEnv(index) : (opts.dataPlaneEnv ?? {});
}

export async function startTopology(name: TopologyName, opts: TopologyOptions = {}): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  const secret = randomBytes(16).toString('hex');
  const count = name === 'embedded' ? 1 : (opts.dataPlanes ?? 2);
  const ports = await freePorts(1 + count * 3);
  const tlsPort = (i: number) => ports[1 + count * 2 + i]!;
  const adminPort = ports[0]!;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  let database: TestDatabase | null = null;
  const redisUrl = opts.redisUrl ?? SHARED_REDIS_URL;
  const prefix = uniqueRedisPrefix(`e2e-${name}`);
  const dataPlanes: DataPlaneHandle[] = [];
  let controlPlane: SpawnedProcess;
  let cpEnv: NodeJS.ProcessEnv;
  const extraControlPlanes: Array<{ adminUrl: string; process: SpawnedProcess }> = [];

  if (name === 'embedded') {
    const env = {
      ...opts.env,
      ...dataPlaneEnvOf(opts, 0),
      GATEHOUSE_DATA_DIR: join(dir, 'node'),
      GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${ports[1]}${opts.proxyListenFlags ?? ''}`,
      GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${ports[2]}`,
      GATEHOUSE_PROXY_TLS_LISTEN: `127.0.0.1:${tlsPort(0)}${opts.proxyTlsListenFlags ?? ''}`,
    };
    cpEnv = env;
    controlPlane = await cliProcess('gatehouse start', 'start', env, /status API listening/);
    dataPlanes.push({ proxyUrl: `http://127.0.0.1:${ports[1]}`, proxyTlsUrl: `https://127.0.0.1:${tlsPort(0)}`, statusUrl: `http://127.0.0.1:${ports[2]}`, dataDir: env.GATEHOUSE_DATA_DIR, env, process: controlPlane });
  } else {
    database = await createTestDatabase({ prefix: 'gh_e2e' });
    const common = { ...opts.env, REDIS_URL: redisUrl, GATEHOUSE_REDIS_PREFIX: prefix, GATEHOUSE_CLUSTER_SECRET: secret };
    cpEnv = { ...common, DATABASE_URL: database.url, GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`, GATEHOUSE_DATA_DIR: join(dir, 'cp') };
    controlPlane = await cliProcess('gatehouse control-plane', 'control-plane', cpEnv, /admin API listening/);
    // the other control planes and the data planes start side by side once the first control plane has migrated
    const morePorts = await freePorts(Math.max(0, (opts.controlPlanes ?? 1) - 1));
    const startingControlPlanes = morePorts.map(async (port, i) => {
      const env = { ...cpEnv, GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${port}`, GATEHOUSE_DATA_DIR: join(dir, `cp${i + 1}`) };
      return { adminUrl: `http://127.0.0.1:${port}`, process: await cliProcess(`gatehouse control-plane ${i + 1}`, 'control-plane', env, /admin API listening/) };
    });
    const startingDataPlanes = Array.from({ length: count }, async (_, i): Promise<DataPlaneHandle> => {
      const proxyPort = ports[1 + i * 2]!;
      const statusPort = ports[2 + i * 2]!;
      const env = {
        ...common,
        ...dataPlaneEnvOf(opts, i),
        GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}${opts.proxyListenFlags ?? ''}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        GATEHOUSE_DATA_DIR: join(dir, `dp${i}`),
        GATEHOUSE_DATA_PLANE_ID: `e2e-dp-${i}`,
        GATEHOUSE_PROXY_TLS_LISTEN: `127.0.0.1:${tlsPort(i)}${opts.proxyTlsListenFlags ?? ''}`,
      };
      const proc = await cliProcess(`gatehouse data-plane ${i}`, 'data-plane', env, /status API listening/);
      return { proxyUrl: `http://127.0.0.1:${proxyPort}`, proxyTlsUrl: `https://127.0.0.1:${tlsPort(i)}`, statusUrl: `http://127.0.0.1:${statusPort}`, dataDir: env.GATEHOUSE_DATA_DIR, env, process: proc };
    });
    const [controlPlaneStarts, dataPlaneStarts] = await Promise.all([Promise.allSettled(startingControlPlanes), Promise.allSettled(startingDataPlanes)]);
    extraControlPlanes.push(...fulfilled(controlPlaneStarts));
    dataPlanes.push(...fulfilled(dataPlaneStarts));
    const failed = [...controlPlaneStarts, ...dataPlaneStarts].find((s) => s.status === 'rejected');
    if (failed) {
      // what did start must not outlive the failure
      await Promise.all([controlPlane.stop(), ...extraControlPlanes.map((cp) => cp.process.stop()), ...dataPlanes.map((dp) => dp.process.stop())]);
      await database.drop().catch(() => {});
      throw failed.reason;
    }
  }

  const topology: Topology = {
    name,
    adminUrl,
    dataPlanes,
    proxyUrl: dataPlanes[0]!.proxyUrl,
    get controlPlane() {
      return controlPlane;
    },
    get controlPlanes() {
      return [{ adminUrl, process: controlPlane }, ...extraControlPlanes];
    },
    databaseUrl: database?.url ?? null,
    redisPrefix: name === 'cluster' ? prefix : null,
    async converge(timeoutMs = 15_000) {
      // with RBAC enforced the admin API's /status needs a token: the bootstrap one, when the topology has it
      const adminToken = opts.env?.GATEHOUSE_ADMIN_TOKEN;
      const { config_version: version } = await json(`${adminUrl}/status`, adminToken ? { 'Kong-Admin-Token': adminToken } : {});
      await waitUntil(
        `every data plane at config version ${version}`,
        async () => {
          for (const dp of dataPlanes) {
            const status = await json(`${dp.statusUrl}/status`);
            if (status.config_version === null || status.config_version < version) return false;
          }
          return true;
        },
        timeoutMs,
      );
      return version as number;
    },
    async restartDataPlane(index, env = {}) {
      const dp = dataPlanes[index]!;
      await dp.process.stop();
      const merged = { ...dp.env, ...env };
      dp.process = await cliProcess(`gatehouse data-plane ${index}`, name === 'embedded' ? 'start' : 'data-plane', merged, /status API listening/);
      if (name === 'embedded') controlPlane = dp.process;
    },
    async stopControlPlane() {
      await controlPlane.stop();
    },
    async startControlPlane() {
      controlPlane = await cliProcess('gatehouse control-plane', name === 'embedded' ? 'start' : 'control-plane', cpEnv, /admin API listening/);
      if (name === 'embedded') dataPlanes[0]!.process = controlPlane;
    },
    async stop() {
      await Promise.all([controlPlane.stop(), ...extraControlPlanes.map((cp) => cp.process.stop()), ...dataPlanes.map((dp) => dp.process.stop())]);
      if (database) await database.drop();
      // a Redis Cluster of a test's own goes away whole with its processes
      if (name === 'cluster' && !/^rediss?\+cluster:/.test(redisUrl)) await deleteRedisPrefix(redisUrl, prefix).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return topology;
}

/** A small admin client: form-encoded writes as the interface document shows them. */
export function adminClient(adminUrl: string) {
  const send = async (method: string, path: string, form?: Record<string, string | string[]>) => {
    let body: string | undefined;
    if (form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, item);
      body = params.toString();
    }
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
      body,
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    if (res.status >= 500) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return { status: res.status, body: json };
  };
  return {
    post: (path: string, form: Record<string, string | string[]> = {}) => send('POST', path, form),
    patch: (path: string, form: Record<string, string | string[]>) => send('PATCH', path, form),
    put: (path: string, form: Record<string, string | string[]>) => send('PUT', path, form),
    get: (path: string) => send('GET', path),
    delete: (path: string) => send('DELETE', path),
  };
}

/** One admin request with a JSON body (when given); the answer's status and parsed JSON body. */
export async function jsonAdmin(adminUrl: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** POSTs a JSON body and returns the created entity; anything but 201 throws with the answer. */
export async function createdThrough(adminUrl: string, path: string, body: unknown): Promise<any> {
  const res = await jsonAdmin(adminUrl, 'POST', path, body);
  if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A proxied request; returns status, headers and the echo upstream's JSON report (or the gateway's body). */
export async function proxied(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body };
}
