// `house` (issue 24): the current tree against the main before the house's restructuring (BENCH_HOUSE_BASE, default
// 3b349a1, checked out in a temporary git worktree with `pnpm install --offline`), each as a control plane over
// Postgres + a data plane over Redis run from its own sources, both loaded with BENCH_HOUSE_N consumers (default
// 100,000) with a key-auth key each through POST /config. Then BENCH_ROUNDS alternating rounds (default 5; base then
// current, current then base, …), each measuring for both trees:
//   key-auth throughput: autocannon, BENCH_CONNECTIONS connections for BENCH_SECONDS, cycling through 1,024 keys drawn
//     at random from the N loaded (the same keys for both trees), with the data plane's CPU time per request;
//   write → served: BENCH_HOUSE_WRITES (default 5) new consumers with a new key each through the admin API, one at a
//     time, each timed from the first write until the data plane answers 200 with the key (polled every 2 ms).
// Printed beside them: the POST /config time, and each tree's control plane and data plane RSS once idle after the rounds.
// The verdicts compare the median of the rounds' ratios current/base: throughput ≥ 0.95×, write → served p50 ≤ 1.05×
// or within the base's own spread over the rounds ("no worse than before").
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { checkoutBase } from './proxy-connections';
import { houseDocument, houseKeyOf, loadHouse, startHouseCluster, treeRssMb, waitServed, type HouseCluster, type HouseLoad } from './house-cluster';
import { medianRoundRatio, micros, processCpuMs } from './interleaved';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEYS_CYCLED = 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One tree's figures, one entry per round. */
interface TreeRounds {
  rps: number[];
  cpuUs: number[];
  writeP50: number[];
  writeMax: number[];
  failed: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  return n === 0 ? NaN : n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
};

/** `KEYS_CYCLED` keys of the `n` loaded, drawn at random (the last one loaded among them) */
function sampleKeys(n: number): string[] {
  const keys = [houseKeyOf(n - 1)];
  while (keys.length < Math.min(KEYS_CYCLED, n)) keys.push(houseKeyOf(Math.floor(Math.random() * n)));
  return keys;
}

/** every request of a run goes to the bench route; the connections cycle through `keys` (prebuilt, no per-request setup) */
const requestsWith = (keys: string[]) => keys.map((key) => ({ method: 'GET' as const, path: '/bench', headers: { apikey: key } }));

/** key-auth load on one cluster's data plane: requests per second and the data plane's CPU time per request (µs) */
async function throughput(cluster: HouseCluster, keys: string[], opts: { seconds: number; connections: number }): Promise<{ rps: number; cpuUs: number | null; failed: number }> {
  const cpu0 = processCpuMs(cluster.dataPlane.pid);
  const r = await autocannon({ url: cluster.proxyUrl, connections: opts.connections, duration: opts.seconds, requests: requestsWith(keys) });
  const cpu1 = processCpuMs(cluster.dataPlane.pid);
  const cpuUs = cpu0 === null || cpu1 === null || r.requests.total === 0 ? null : ((cpu1 - cpu0) * 1000) / r.requests.total;
  return { rps: r.requests.total / r.duration, cpuUs, failed: r.errors + r.timeouts + r.non2xx };
}

/** `samples` new consumers with a key each, one at a time: ms from the consumer's write until the data plane serves its key */
async function writeToServed(cluster: HouseCluster, samples: number, tag: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const username = `house-new-${tag}-${i}`;
    const key = `house-new-key-${tag}-${i}`;
    const started = performance.now();
    const consumer = await cluster.admin('POST', '/consumers', { username });
    if (consumer.status !== 201) throw new Error(`${cluster.label}: POST /consumers answered ${consumer.status}`);
    const credential = await cluster.admin('POST', `/consumers/${username}/key-auth`, { key });
    if (credential.status !== 201) throw new Error(`${cluster.label}: POST key-auth answered ${credential.status}`);
    await waitServed(cluster, key, 60_000, 2);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * Waits (up to 20 s) until every process of the clusters is about idle (under a fifth of a core together over half
 * a second): after writes, a control plane stores its snapshot and a data plane compacts its cache, which would weigh
 * on whichever tree the next measurement loads.
 */
async function settle(clusters: HouseCluster[]): Promise<void> {
  const pids = clusters.flatMap((c) => [c.controlPlane.pid, c.dataPlane.pid]);
  const cpu = () => pids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const before = cpu();
    await sleep(500);
    if (cpu() - before < 100) return;
  }
}

/** Round after round, both trees in alternating order: throughput of each, then write → served of each. */
async function measureRounds(clusters: [HouseCluster, HouseCluster], keys: string[], opts: { seconds: number; connections: number; rounds: number; writes: number }): Promise<[TreeRounds, TreeRounds]> {
  const figures = clusters.map((): TreeRounds => ({ rps: [], cpuUs: [], writeP50: [], writeMax: [], failed: 0 })) as [TreeRounds, TreeRounds];
  // warm-up: pools, JIT, the key lookups
  for (const c of clusters) await autocannon({ url: c.proxyUrl, connections: opts.connections, duration: 2, requests: requestsWith(keys) });
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    await settle(clusters);
    for (const i of order) {
      const t = await throughput(clusters[i]!, keys, opts);
      figures[i]!.rps.push(t.rps);
      if (t.cpuUs !== null) figures[i]!.cpuUs.push(t.cpuUs);
      figures[i]!.failed += t.failed;
    }
    for (const i of order) {
      const times = await writeToServed(clusters[i]!, opts.writes, `r${round}`);
      figures[i]!.writeP50.push(median(times));
      figures[i]!.writeMax.push(Math.max(...times));
    }
  }
  return figures;
}

/** `median (min–max)` of a tree's rounds */
const spread = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

function printHouse(labels: [string, string], loads: HouseLoad[], rss: string[], figures: [TreeRounds, TreeRounds], opts: { n: number; seconds: number; connections: number; rounds: number; writes: number }): void {
  const [base, current] = figures;
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(
    `\nhouse: the current tree against ${labels[0]} (CP over Postgres + DP over Redis each, from its sources; ${opts.n} consumers with a key-auth key each; ` +
      `${opts.rounds} alternating rounds of ${opts.seconds} s × ${opts.connections} connections over ${Math.min(KEYS_CYCLED, opts.n)} random keys of the ${opts.n}, then ${opts.writes} writes → served; RSS once idle after the rounds)`,
  );
  console.log(`${pad('tree', 18)}${pad('POST /config', 14)}${pad('then served', 13)}${pad('RSS CP / DP MiB', 17)}${pad('req/s median (min–max)', 28)}${pad('DP CPU/req', 12)}${pad('failed', 8)}write → served p50 (min–max), max ms`);
  figures.forEach((f, i) => {
    const cpu = f.cpuUs.length > 0 ? micros(median(f.cpuUs)) : 'n/a';
    console.log(
      `${pad(labels[i]!, 18)}${pad(`${loads[i]!.postSeconds.toFixed(1)} s`, 14)}${pad(`${loads[i]!.servedSeconds.toFixed(1)} s`, 13)}${pad(rss[i]!, 17)}${pad(spread(f.rps, 0), 28)}${pad(cpu, 12)}${pad(String(f.failed), 8)}` +
        `${spread(f.writeP50, 1)}, ${Math.max(...f.writeMax).toFixed(1)}`,
    );
  });
  const rpsRatio = medianRoundRatio(current.rps, base.rps);
  const cpuRatio = medianRoundRatio(current.cpuUs, base.cpuUs);
  const writeRatio = medianRoundRatio(current.writeP50, base.writeP50);
  const fmt = (r: number | null) => (r === null ? 'n/a' : `${r.toFixed(2)}×`);
  const throughputVerdict = rpsRatio !== null && rpsRatio >= 0.95 ? 'meets' : 'MISSES';
  const writeVerdict = writeRatio !== null && writeRatio <= 1.05 ? 'meets' : median(current.writeP50) <= Math.max(...base.writeP50) ? 'within noise (under the base\'s slowest round)' : 'MISSES';
  console.log(`current / base (median of the rounds' ratios), target "no worse than before":`);
  console.log(`  key-auth throughput ${fmt(rpsRatio)} (target ≥ 0.95×): ${throughputVerdict}; data plane CPU per request ${fmt(cpuRatio)} (lower is better)`);
  console.log(`  write → served p50 ${fmt(writeRatio)} (target ≤ 1.05× or within noise): ${writeVerdict}`);
}

export async function measureHouse(upstreamUrl: string, opts: { seconds: number; connections: number }): Promise<void> {
  const n = Number(process.env.BENCH_HOUSE_N ?? 100_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const writes = Number(process.env.BENCH_HOUSE_WRITES ?? 5);
  const base = checkoutBase(process.env.BENCH_HOUSE_BASE ?? '3b349a1');
  const clusters: HouseCluster[] = [];
  try {
    clusters.push(await startHouseCluster(base.dir, `base ${base.commit}`));
    clusters.push(await startHouseCluster(ROOT, 'current'));
    const document = houseDocument(n, upstreamUrl);
    const loads: HouseLoad[] = [];
    for (const c of clusters) loads.push(await loadHouse(c, document, n));
    const pair = clusters as [HouseCluster, HouseCluster];
    const figures = await measureRounds(pair, sampleKeys(n), { ...opts, rounds, writes });
    // after the rounds, both trees alike: loaded, measured, idle again
    await settle(clusters);
    const rss = clusters.map((c) => `${treeRssMb(c.controlPlane.pid).toFixed(0)} / ${treeRssMb(c.dataPlane.pid).toFixed(0)}`);
    printHouse([pair[0].label, pair[1].label], loads, rss, figures, { n, ...opts, rounds, writes });
  } finally {
    const stopped = await Promise.allSettled(clusters.map((c) => c.stop()));
    base.remove();
    for (const s of stopped) if (s.status === 'rejected') console.error(`house: cleaning up a cluster failed: ${String(s.reason)}`);
  }
}
