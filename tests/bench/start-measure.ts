// What the start-up benches share: free ports, waiting for a started node to answer, its first request and idle RSS,
// and stopping it by its PID.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

export async function until(check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(10)) {
    try {
      if (await check()) return;
    } catch {}
  }
  throw new Error('gatehouse did not come up in time');
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

/**
 * From a node's spawn (`started`, performance.now()) to its first 200 on `${proxyUrl}/startup`, then its resident set
 * after `idleMs` without traffic; the node is stopped afterwards whatever happens.
 */
export async function firstRequestThenIdle(child: ChildProcess, started: number, proxyUrl: string, idleMs: number, prepare?: () => Promise<void>): Promise<{ firstRequestMs: number; idleRssMb: number }> {
  try {
    if (prepare) await prepare();
    await until(async () => (await fetch(`${proxyUrl}/startup`)).status === 200);
    const firstRequestMs = performance.now() - started;
    await sleep(idleMs);
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return { firstRequestMs, idleRssMb: rss ? Number(rss[1]) / 1024 : NaN };
  } finally {
    await stopChild(child);
  }
}
