// DB-less (GATEHOUSE_DATABASE=off with a declarative file) against embedded PGlite, both `gatehouse start` from the
// sources: time from spawning the process to its first proxied request, RSS once idle, and `POST /config` of a
// document with N consumers (one key-auth key each).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstRequestThenIdle, freePort, stopChild, until } from './start-measure';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START = ['--import', 'tsx', 'packages/cli/src/main.ts', 'start'];

export type StoreVariant = 'embedded' | 'dbless';

export interface DblessSample {
  variant: StoreVariant;
  firstRequestMs: number;
  idleRssMb: number;
}

interface Setup {
  env: NodeJS.ProcessEnv;
  admin: string;
  proxy: string;
}

function document(upstreamUrl: string, consumers = 0): string {
  const doc = {
    _format_version: '3.0',
    services: [{ name: 'startup', url: upstreamUrl, routes: [{ name: 'startup', paths: ['/startup'] }] }],
    consumers: Array.from({ length: consumers }, (_, i) => ({ username: `c${i}`, keyauth_credentials: [{ key: `key-${i}` }] })),
  };
  return JSON.stringify(doc);
}

async function setups(dir: string, upstreamUrl: string): Promise<Record<StoreVariant, Setup>> {
  const out = {} as Record<StoreVariant, Setup>;
  for (const variant of ['embedded', 'dbless'] as const) {
    const [adminPort, proxyPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
      GATEHOUSE_DATA_DIR: join(dir, variant),
      GATEHOUSE_LOG_LEVEL: 'warn',
      GATEHOUSE_PROXY_TLS_LISTEN: 'off',
      GATEHOUSE_WORKERS: '1',
      GATEHOUSE_ACCESS_LOG: 'off',
      DATABASE_URL: '',
      REDIS_URL: '',
    };
    if (variant === 'dbless') {
      writeFileSync(join(dir, 'kong.json'), document(upstreamUrl));
      Object.assign(env, { GATEHOUSE_DATABASE: 'off', GATEHOUSE_DECLARATIVE_CONFIG: join(dir, 'kong.json') });
    }
    out[variant] = { env, admin: `http://127.0.0.1:${adminPort}`, proxy: `http://127.0.0.1:${proxyPort}` };
  }
  return out;
}

function spawnStart(setup: Setup): ChildProcess {
  return spawn(process.execPath, START, { cwd: ROOT, env: { ...process.env, ...setup.env }, stdio: 'ignore' });
}

async function runOnce(variant: StoreVariant, setup: Setup, idleMs: number): Promise<DblessSample> {
  const started = performance.now();
  return { variant, ...(await firstRequestThenIdle(spawnStart(setup), started, setup.proxy, idleMs)) };
}

/** ms of one `POST /config` of a document with `consumers` consumers, on a running node of each kind */
async function postConfigMs(setup: Setup, body: string): Promise<number> {
  const child = spawnStart(setup);
  try {
    await until(async () => (await fetch(`${setup.admin}/status`)).ok);
    const started = performance.now();
    const res = await fetch(`${setup.admin}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`POST /config answered ${res.status}`);
    return performance.now() - started;
  } finally {
    await stopChild(child);
  }
}

export interface DblessFigures {
  samples: DblessSample[];
  consumers: number;
  postConfig: Record<StoreVariant, number>;
}

/** Prepares both data directories (the embedded one through its admin API), then alternates starts `runs` times. */
export async function measureDbless(upstreamUrl: string, runs: number, idleMs: number, consumers: number): Promise<DblessFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-dbless-'));
  try {
    const setup = await setups(dir, upstreamUrl);
    // the embedded database gets the same service and route, once (its first start also runs initdb)
    const first = spawnStart(setup.embedded);
    try {
      await until(async () => (await fetch(`${setup.embedded.admin}/status`)).ok);
      const res = await fetch(`${setup.embedded.admin}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: document(upstreamUrl) });
      if (res.status !== 201) throw new Error(`embedded setup answered ${res.status}`);
    } finally {
      await stopChild(first);
    }
    const samples: DblessSample[] = [];
    for (let i = 0; i < runs; i++) for (const variant of ['embedded', 'dbless'] as const) samples.push(await runOnce(variant, setup[variant], idleMs));
    const big = document(upstreamUrl, consumers);
    const postConfig = { embedded: await postConfigMs(setup.embedded, big), dbless: await postConfigMs(setup.dbless, big) };
    return { samples, consumers, postConfig };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function formatDbless(f: DblessFigures): string {
  const of = (variant: StoreVariant) => f.samples.filter((s) => s.variant === variant);
  const start = (v: StoreVariant) => median(of(v).map((s) => s.firstRequestMs));
  const rss = (v: StoreVariant) => median(of(v).map((s) => s.idleRssMb));
  const line = (v: StoreVariant) => `${v.padEnd(8)} first proxied request p50 ${start(v).toFixed(0)} ms, idle RSS p50 ${rss(v).toFixed(0)} MB`;
  return [
    line('embedded'),
    line('dbless'),
    `dbless vs embedded: start ${(start('dbless') / start('embedded')).toFixed(2)}×, idle RSS ${(rss('dbless') / rss('embedded')).toFixed(2)}×`,
    `POST /config with ${f.consumers} consumers: embedded ${f.postConfig.embedded.toFixed(0)} ms, dbless ${f.postConfig.dbless.toFixed(0)} ms (${(f.postConfig.dbless / f.postConfig.embedded).toFixed(2)}×)`,
  ].join('\n');
}
