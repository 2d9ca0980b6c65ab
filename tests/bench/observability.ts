// The cost of observability on the proxy: key-auth alone, with the prometheus plugin (every flag on), with the access
// log (to a file), and with both, each printed as a ratio against key-auth alone (target ≥ 0.95×). The data
// planes run side by side and are loaded in alternating rounds; their CPU time per request is printed too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { here, printTable, startScript, type Started } from './harness';
import { interleaved, medianRoundRatio, micros } from './interleaved';

export async function measureObservability(upstreamUrl: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-observe-'));
  const variants = [
    { name: 'key-auth (metrics registry only)', observe: 'none' },
    { name: 'key-auth + prometheus plugin', observe: 'prometheus' },
    { name: 'key-auth + access log (a file)', observe: 'log' },
    { name: 'key-auth + prometheus + access log', observe: 'full' },
  ];
  const servers: Started[] = [];
  try {
    for (const v of variants) {
      servers.push(await startScript(here('servers/dataplane-observed.ts'), { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey, OBSERVE: v.observe, ACCESS_LOG: join(dir, `access-${v.observe}.log`) }));
    }
    const rows = await interleaved(
      variants.map((v, i) => ({ name: v.name, url: `http://127.0.0.1:${servers[i]!.port}/bench`, pid: servers[i]!.child.pid!, headers: { apikey: opts.apiKey } })),
      opts,
    );
    console.log('\nobservability cost (target: ≥ 0.95× of key-auth alone)');
    printTable(rows, rows[0]!);
    for (const r of rows) console.log(`${r.name}: rounds ${r.rounds.map((x) => x.toFixed(0)).join(', ')} req/s; data plane CPU ${micros(r.serverCpuUs)} per request`);
    const base = rows[0]!.serverCpuUs;
    if (base !== null) {
      const ratio = (r: (typeof rows)[number]) => (r.serverCpuUs === null ? 'n/a' : `${(base / r.serverCpuUs).toFixed(2)}×`);
      console.log(`by CPU per request: + prometheus plugin ${ratio(rows[1]!)}, + access log ${ratio(rows[2]!)}, + both ${ratio(rows[3]!)} of key-auth alone`);
    }
    // per round, then the median: a round in which the machine slowed down weighs as one round, not by its requests
    const median = (r: (typeof rows)[number], pick: (x: (typeof rows)[number]) => number[], higherIsBetter: boolean) => {
      const m = medianRoundRatio(pick(r), pick(rows[0]!), higherIsBetter);
      return m === null ? 'n/a' : `${m.toFixed(2)}×`;
    };
    console.log(
      `median of the rounds' ratios, req/s: + prometheus plugin ${median(rows[1]!, (x) => x.rounds, true)}, + access log ${median(rows[2]!, (x) => x.rounds, true)}, + both ${median(rows[3]!, (x) => x.rounds, true)}; ` +
        `CPU per request: ${median(rows[1]!, (x) => x.cpuRounds, false)}, ${median(rows[2]!, (x) => x.cpuRounds, false)}, ${median(rows[3]!, (x) => x.cpuRounds, false)}`,
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
