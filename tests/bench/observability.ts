// The cost of observability on the proxy: key-auth alone, with the prometheus plugin (every flag on), and with the
// access log as well, each measured in this run and printed as a ratio against key-auth alone (target ≥ 0.95×).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { here, load, printTable, startScript, type LoadResult } from './harness';

export async function measureObservability(upstreamUrl: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-observe-'));
  const variants = [
    { name: 'key-auth (metrics registry only)', observe: 'none' },
    { name: 'key-auth + prometheus plugin', observe: 'prometheus' },
    { name: 'key-auth + prometheus + access log', observe: 'full' },
  ];
  const rows: LoadResult[] = [];
  try {
    for (const v of variants) {
      const server = await startScript(here('servers/dataplane-observed.ts'), { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey, OBSERVE: v.observe, ACCESS_LOG: join(dir, 'access.log') });
      try {
        rows.push(await load(v.name, `http://127.0.0.1:${server.port}/bench`, { connections: opts.connections, seconds: opts.seconds, headers: { apikey: opts.apiKey } }));
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('\nobservability cost (target: ≥ 0.95× of key-auth alone)');
  printTable(rows, rows[0]!);
}
