// Balancing figures, measured in this run: a data plane with key-auth balancing over 4 targets against the same over
// 1 target (target ≥ 0.95×), and the cost of loading 1,000 upstreams × 10 targets (compile, balancer apply, memory).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { here, load, printTable, startScript, type LoadResult } from './harness';

const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export async function runBalancingBench(opts: { seconds: number; connections: number; apiKey: string }): Promise<void> {
  const upstream = await startScript(here('servers/upstream.ts'), { PORT: '0' });
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const rows: LoadResult[] = [];
  try {
    for (const [name, targets] of [
      ['balanced, key-auth, 1 target', '1'],
      ['balanced, key-auth, 4 targets', '4'],
    ] as const) {
      const server = await startScript(here('servers/dataplane-balanced.ts'), { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey, TARGETS: targets });
      try {
        rows.push(await load(name, `http://127.0.0.1:${server.port}/bench`, { connections: opts.connections, seconds: opts.seconds, headers: { apikey: opts.apiKey } }));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await upstream.stop();
  }
  console.log('\nbalancing (ratio vs the same data plane over one target; target ≥ 0.95×)');
  printTable(rows, rows[0]!);

  const result = await applyFigures();
  console.log(
    `\n${result.upstreams} upstreams × ${result.targets / result.upstreams} targets: compile ${result.compileMs.toFixed(1)} ms ` +
      `(the same services without upstreams ${result.plainCompileMs.toFixed(1)} ms), balancer apply ${result.applyMs.toFixed(1)} ms, ` +
      `re-apply of an unchanged set ${result.reapplyMs.toFixed(1)} ms, memory ${result.balancedHeapMb.toFixed(1)} MiB over the ` +
      `${result.plainHeapMb.toFixed(1)} MiB of the services alone${result.gc ? '' : ' (no --expose-gc: memory figures are rough)'}`,
  );
}

interface ApplyResult {
  upstreams: number;
  targets: number;
  plainCompileMs: number;
  compileMs: number;
  applyMs: number;
  reapplyMs: number;
  plainHeapMb: number;
  balancedHeapMb: number;
  gc: boolean;
}

function applyFigures(): Promise<ApplyResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [here('servers/balancer-apply.ts')], { env: { ...process.env, NODE_OPTIONS: '--expose-gc' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      const m = /RESULT (\{.*\})/.exec(out);
      if (m) resolve(JSON.parse(m[1]!) as ApplyResult);
      else reject(new Error(`balancer-apply exited with ${code}:\n${out}`));
    });
  });
}
