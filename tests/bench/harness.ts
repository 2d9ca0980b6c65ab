// Shared pieces of the benchmark: start a server script as its own process, load it with autocannon, stop it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export interface Started {
  port: number;
  /** what the script printed up to its LISTENING line (a scenario may print e.g. `JWT <token>` before it) */
  output: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `script` (with `args`) with tsx; resolves when it prints `LISTENING <port>` (or matches `readyPattern`). */
export function startScript(script: string, env: Record<string, string> = {}, readyPattern = /LISTENING (\d+)/, args: string[] = []): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // BENCH_START_SECONDS (default 30): how long a script may take to start, for a machine under load
    const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${out}`)), Number(process.env.BENCH_START_SECONDS ?? 30) * 1000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = readyPattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          port: Number(m[1]),
          output: out,
          child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 3000).unref();
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${out}`));
    });
  });
}

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(name: string, url: string, opts: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<LoadResult> {
  // warm-up: pools, JIT
  await autocannon({ url, connections: opts.connections, duration: 2, headers: opts.headers });
  const r = await autocannon({ url, connections: opts.connections, duration: opts.seconds, headers: opts.headers });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/** Completed calls per second with `concurrency` calls of `call` in flight, one after another each, for `seconds`. */
export async function closedLoopRate(call: () => Promise<unknown>, seconds: number, concurrency: number): Promise<{ rate: number; failures: number }> {
  const until = Date.now() + seconds * 1000;
  let done = 0;
  let failures = 0;
  const loop = async () => {
    while (Date.now() < until) {
      try {
        await call();
        done++;
      } catch {
        failures++;
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { rate: done / ((Date.now() - started) / 1000), failures };
}

export function printTable(rows: LoadResult[], baseline: LoadResult): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`${pad('target', 44)}${pad('req/s', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('errors', 8)}${pad('non-2xx', 9)}${pad('ratio', 8)}p99 ratio (vs ${baseline.name})`);
  for (const r of rows) {
    const p99Ratio = baseline.p99 > 0 ? `${(r.p99 / baseline.p99).toFixed(2)}×` : '-';
    console.log(
      `${pad(r.name, 44)}${pad(r.rps.toFixed(0), 10)}${pad(String(r.p50), 8)}${pad(String(r.p99), 8)}${pad(String(r.errors), 8)}${pad(String(r.non2xx), 9)}${pad(`${(r.rps / baseline.rps).toFixed(2)}×`, 8)}${p99Ratio}`,
    );
  }
}
