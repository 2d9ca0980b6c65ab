// `gatehouse start` from the TypeScript sources (tsx, what `pnpm start` runs) against the build (`pnpm build`,
// node packages/cli/dist/main.js): time from spawning the process to its first proxied request, and its RSS once
// idle. Both start on the same data directory, which holds a service and a route to the bench upstream.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstRequestThenIdle, freePort, until } from './start-measure';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const COMMANDS = {
  tsx: ['--import', 'tsx', 'packages/cli/src/main.ts', 'start'],
  dist: ['packages/cli/dist/main.js', 'start'],
} as const;

export type StartVariant = keyof typeof COMMANDS;

export interface StartupSample {
  variant: StartVariant;
  /** spawn → first 200 through the proxy */
  firstRequestMs: number;
  /** resident set size after `idleMs` without traffic */
  idleRssMb: number;
}

async function runOnce(variant: StartVariant, env: NodeJS.ProcessEnv, proxyUrl: string, idleMs: number, prepare?: () => Promise<void>): Promise<StartupSample> {
  const started = performance.now();
  const child = spawn(process.execPath, [...COMMANDS[variant]], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore' });
  return { variant, ...(await firstRequestThenIdle(child, started, proxyUrl, idleMs, prepare)) };
}

/** Builds, prepares a data directory, then alternates tsx and dist starts `runs` times each. */
export async function measureStartup(upstreamUrl: string, runs = 3, idleMs = 5000): Promise<StartupSample[]> {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-startup-'));
  const [adminPort, proxyPort] = [await freePort(), await freePort()];
  const admin = `http://127.0.0.1:${adminPort}`;
  const env = {
    GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
    GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_LOG_LEVEL: 'warn',
    GATEHOUSE_PROXY_TLS_LISTEN: 'off',
    // the RSS figure is one process's: the proxy runs in it
    GATEHOUSE_WORKERS: '1',
  };
  const post = (path: string, body: unknown) =>
    fetch(`${admin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());
  try {
    await runOnce('dist', env, `http://127.0.0.1:${proxyPort}`, 0, async () => {
      await until(async () => (await fetch(`${admin}/status`)).ok);
      await post('/services', { name: 'startup', url: upstreamUrl });
      await post('/services/startup/routes', { paths: ['/startup'] });
    });
    const samples: StartupSample[] = [];
    for (let i = 0; i < runs; i++) {
      for (const variant of ['tsx', 'dist'] as const) samples.push(await runOnce(variant, env, `http://127.0.0.1:${proxyPort}`, idleMs));
    }
    return samples;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** One line per variant, with dist as a ratio of tsx. */
export function formatStartup(samples: StartupSample[]): string {
  const of = (variant: StartVariant) => samples.filter((s) => s.variant === variant);
  const line = (variant: StartVariant) =>
    `${variant.padEnd(5)} first proxied request p50 ${median(of(variant).map((s) => s.firstRequestMs)).toFixed(0)} ms, idle RSS p50 ${median(of(variant).map((s) => s.idleRssMb)).toFixed(0)} MB`;
  const time = median(of('dist').map((s) => s.firstRequestMs)) / median(of('tsx').map((s) => s.firstRequestMs));
  const rss = median(of('dist').map((s) => s.idleRssMb)) / median(of('tsx').map((s) => s.idleRssMb));
  return `${line('tsx')}\n${line('dist')}\ndist vs tsx: start ${time.toFixed(2)}×, idle RSS ${rss.toFixed(2)}×`;
}
