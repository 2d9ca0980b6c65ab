// Declarative configuration at scale: `POST /config` and `gatehouse config apply` of documents with N consumers,
// each with a key-auth credential, against a control plane over Postgres (with one data plane over Redis), for
// N = 1k, 10k, 100k (BENCH_DECL_SIZES). Prints seconds, the control plane's peak RSS, and the growth per 10×.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTopology } from '../e2e/support/topology';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'packages/cli/src/main.ts');

export interface DeclarativeRow {
  consumers: number;
  postSeconds: number;
  cliSeconds: number;
  peakRssMb: number;
}

/** a format-3.0 document: one service with key-auth, and `consumers` consumers with one key-auth key each */
export function documentWith(consumers: number): string {
  const list = [];
  for (let i = 0; i < consumers; i++) list.push({ username: `user-${i}`, keyauth_credentials: [{ key: `key-${i}-${'k'.repeat(16)}` }] });
  return JSON.stringify({ _format_version: '3.0', services: [{ name: 'bench', url: 'http://127.0.0.1:9', routes: [{ name: 'bench', paths: ['/bench'], plugins: [{ name: 'key-auth' }] }] }], consumers: list });
}

/** the peak resident set of a process since it started (VmHWM), in MiB */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

async function post(adminUrl: string, body: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${adminUrl}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`POST /config answered ${res.status}`);
  return (performance.now() - started) / 1000;
}

function cliApply(adminUrl: string, file: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', CLI, 'config', 'apply', file, '--admin-url', adminUrl, '--no-progress'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, _out, stderr) => {
      if (err) reject(new Error(`gatehouse config apply failed: ${stderr}`));
      else resolve((performance.now() - started) / 1000);
    });
  });
}

export async function measureDeclarative(sizes: number[]): Promise<DeclarativeRow[]> {
  const rows: DeclarativeRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-decl-'));
  try {
    for (const consumers of sizes) {
      // a fresh control plane per size, so its peak RSS belongs to this size
      const topology = await startTopology('cluster', { dataPlanes: 1, env: { GATEHOUSE_LOG_LEVEL: 'error' } });
      try {
        const doc = documentWith(consumers);
        const file = join(dir, `consumers-${consumers}.json`);
        writeFileSync(file, doc);
        const postSeconds = await post(topology.adminUrl, doc);
        await post(topology.adminUrl, JSON.stringify({ _format_version: '3.0' }));
        const cliSeconds = await cliApply(topology.adminUrl, file);
        rows.push({ consumers, postSeconds, cliSeconds, peakRssMb: peakRssMb(topology.controlPlane.pid) });
      } finally {
        await topology.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function printDeclarative(rows: DeclarativeRow[]): void {
  console.log('\ndeclarative configuration (CP over Postgres + 1 DP over Redis; N consumers with one key-auth key each):');
  console.log('  consumers   POST /config   config apply   CP peak RSS   growth per 10× (POST, apply; target ≤ 12×)');
  rows.forEach((row, i) => {
    const prev = rows[i - 1];
    const growth = prev && row.consumers === prev.consumers * 10 ? `${(row.postSeconds / prev.postSeconds).toFixed(1)}×, ${(row.cliSeconds / prev.cliSeconds).toFixed(1)}×` : '';
    console.log(
      `  ${String(row.consumers).padStart(9)}   ${row.postSeconds.toFixed(2).padStart(10)} s   ${row.cliSeconds.toFixed(2).padStart(10)} s   ${row.peakRssMb.toFixed(0).padStart(7)} MiB   ${growth}`,
    );
  });
}
