// Traffic-plugin figures for `pnpm bench`, each a ratio against a baseline measured in the same run:
//   - key-auth + cors + request-transformer (headers only) against key-auth alone (target ≥ 0.9×);
//   - a proxy-cache hit against the same upstream answered through the gateway (target ≥ 1.5×).
// Selected with BENCH_ONLY=traffic.
import { here, load, printTable, startScript, type LoadResult } from './harness';

interface Pair {
  title: string;
  target: number;
  baseline: { name: string; scenario: string };
  candidate: { name: string; scenario: string };
}

const PAIRS: Pair[] = [
  {
    title: 'key-auth + cors + request-transformer vs key-auth alone',
    target: 0.9,
    baseline: { name: 'traffic: key-auth alone', scenario: 'key-auth' },
    candidate: { name: 'traffic: key-auth + cors + req-transformer', scenario: 'key-auth-cors-rt' },
  },
  {
    title: 'proxy-cache hit vs the upstream through the gateway',
    target: 1.5,
    baseline: { name: 'traffic: upstream through the gateway', scenario: 'proxy' },
    candidate: { name: 'traffic: proxy-cache hit (memory)', scenario: 'proxy-cache' },
  },
];

async function measure(upstreamUrl: string, name: string, scenario: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<LoadResult> {
  const server = await startScript(here('servers/dataplane-traffic.ts'), { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey, SCENARIO: scenario });
  try {
    const headers = { apikey: opts.apiKey, origin: 'http://app.bench.test', 'x-debug': '1' };
    return await load(name, `http://127.0.0.1:${server.port}/bench`, { connections: opts.connections, seconds: opts.seconds, headers });
  } finally {
    await server.stop();
  }
}

export async function benchTrafficPlugins(opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const upstream = await startScript(here('servers/upstream.ts'));
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  try {
    for (const pair of PAIRS) {
      const base = await measure(upstreamUrl, pair.baseline.name, pair.baseline.scenario, opts);
      const candidate = await measure(upstreamUrl, pair.candidate.name, pair.candidate.scenario, opts);
      console.log(`\n${pair.title} (target ≥ ${pair.target}×)`);
      printTable([base, candidate], base);
    }
  } finally {
    await upstream.stop();
  }
}
