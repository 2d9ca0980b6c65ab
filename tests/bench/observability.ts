// The cost of observability on the proxy: key-auth alone, with the prometheus plugin (every flag on), with the access
// log (to a file), and with both, each printed as a ratio against key-auth alone (target ≥ 0.95×). The data
// planes run side by side and are loaded in alternating rounds; their CPU time per request is printed too.
// Where the machine's speed changes from one second to the next, those comparisons of processes measured in turn move
// by more than the cost measured; the cost is then also read from a CPU profile of each data plane loaded alone: the
// share of its samples spent observing ended exchanges, taken in the same span as the rest.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { here, printTable, startScript, type Started } from './harness';
import { interleaved, medianRoundRatio, micros, processCpuMs, threadCpuMs } from './interleaved';
import { profileShare, type FramePick } from './profile-share';

/**
 * The observation of an exchange once it ended: the summary, the route's `log` plugins (the prometheus plugin's
 * recording), the access log's line, its buffering and its writes. The 'close' listener that calls it is not counted:
 * without observers the relay of the response listens there itself.
 */
const observationFrames: FramePick = (frame) =>
  /\/observe\/(access-log|summary)\.ts$|\/shared\/(line-buffer|append-log)\.ts$|\/metrics\/(exchange-metrics|cells)\.ts$|\/prometheus\/index\.ts$/.test(frame.url) ||
  (frame.functionName === 'ended' && frame.url.endsWith('/observe/exchange-end.ts'));

/** what each data plane observes (servers/dataplane-observed.ts's OBSERVE), key-auth alone first */
const VARIANTS = [
  { name: 'key-auth (metrics registry only)', short: 'key-auth alone', observe: 'none' },
  { name: 'key-auth + prometheus plugin', short: '+ prometheus plugin', observe: 'prometheus' },
  { name: 'key-auth + access log (a file)', short: '+ access log', observe: 'log' },
  { name: 'key-auth + prometheus + access log', short: '+ both', observe: 'full' },
];

interface ProfiledRun {
  share: ReturnType<typeof profileShare>;
  requests: number;
  /** CPU time per request (µs) of the main thread, and of the process's other threads (the file writes among them) */
  mainUs: number;
  otherUs: number;
}

/** Runs of one variant as one: shares weighted by their samples, CPU per request by their requests. */
function combined(runs: ProfiledRun[]): ProfiledRun {
  const busyMs = runs.reduce((n, r) => n + r.share.busyMs, 0);
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const bySamples = (pick: (r: ProfiledRun) => number) => runs.reduce((n, r) => n + pick(r) * r.share.busyMs, 0) / busyMs;
  const byRequests = (pick: (r: ProfiledRun) => number) => runs.reduce((n, r) => n + pick(r) * r.requests, 0) / requests;
  return {
    share: { busyMs, part: bySamples((r) => r.share.part), gc: bySamples((r) => r.share.gc) },
    requests,
    mainUs: byRequests((r) => r.mainUs),
    otherUs: byRequests((r) => r.otherUs),
  };
}

/** One data plane of `observe`, started alone, loaded for `seconds` while its profiler runs. */
async function profiledRun(observe: string, upstreamUrl: string, dir: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<ProfiledRun> {
  const file = join(dir, `profile-${observe}.cpuprofile`);
  const server = await startScript(here('servers/dataplane-observed.ts'), { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey, OBSERVE: observe, ACCESS_LOG: join(dir, `profiled-${observe}.log`), PROFILE_FILE: file });
  try {
    const pid = Number(/PID (\d+)/.exec(server.output)![1]);
    const url = `http://127.0.0.1:${server.port}/bench`;
    // resolves once the server prints `word` (its answer to a signal), and stops listening then
    const said = (word: string) =>
      new Promise<void>((resolve) => {
        const out = server.child.stdout!;
        const onData = (chunk: Buffer) => {
          if (!chunk.toString().includes(word)) return;
          out.off('data', onData);
          resolve();
        };
        out.on('data', onData);
      });
    await autocannon({ url, connections: opts.connections, duration: 2, headers: { apikey: opts.apiKey } });
    const profiling = said('PROFILING');
    process.kill(pid, 'SIGUSR2');
    await profiling;
    const main0 = threadCpuMs(pid, pid)!;
    const all0 = processCpuMs(pid)!;
    const r = await autocannon({ url, connections: opts.connections, duration: opts.seconds, headers: { apikey: opts.apiKey } });
    const main1 = threadCpuMs(pid, pid)!;
    const all1 = processCpuMs(pid)!;
    const profiled = said('PROFILED');
    process.kill(pid, 'SIGUSR2');
    await profiled;
    const requests = r.requests.total;
    return { share: profileShare(file, observationFrames), requests, mainUs: ((main1 - main0) * 1000) / requests, otherUs: ((all1 - all0 - (main1 - main0)) * 1000) / requests };
  } finally {
    await server.stop();
  }
}

/** Each variant alone, profiled under load: the share of its main thread's samples spent observing exchanges. */
async function measureProfiles(upstreamUrl: string, dir: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const variants = VARIANTS;
  // two passes, the second in reverse order, each half the time: a machine that slows down during the phase weighs
  // on the first variants and the last alike
  const passes: ProfiledRun[][] = variants.map(() => []);
  const half = { ...opts, seconds: Math.max(2, opts.seconds / 2) };
  for (const order of [[0, 1, 2, 3], [3, 2, 1, 0]]) {
    for (const i of order) passes[i]!.push(await profiledRun(variants[i]!.observe, upstreamUrl, dir, half));
  }
  const runs = passes.map(combined);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  // what a variant costs: its samples observing ended exchanges, plus whatever more its collector took than key-auth alone's
  const cost = (r: ProfiledRun) => r.share.part + Math.max(0, r.share.gc - runs[0]!.share.gc);
  const ratio = (r: ProfiledRun) => `${(1 - cost(r)).toFixed(2)}×`;
  console.log(`\nobservability by CPU profile (each data plane alone, loaded ${half.seconds} s twice while V8's profiler samples it every 250 µs; target ≥ 0.95×)`);
  console.log('variant                  requests   samples ms   observing   GC      → ratio   main thread   other threads');
  variants.forEach((v, i) => {
    const r = runs[i]!;
    console.log(
      `${v.short.padEnd(24)} ${String(r.requests).padStart(8)}   ${r.share.busyMs.toFixed(0).padStart(10)}   ${pct(r.share.part).padStart(9)}   ${pct(r.share.gc).padStart(5)}   ` +
        `${ratio(r).padStart(7)}   ${micros(r.mainUs).padStart(11)}   ${micros(r.otherUs).padStart(13)}`,
    );
  });
  console.log(
    `by CPU profile: + prometheus plugin ${ratio(runs[1]!)}, + access log ${ratio(runs[2]!)}, + both ${ratio(runs[3]!)} of key-auth alone ` +
      "(1 - the share of the main thread's samples spent observing ended exchanges - the collector's share beyond key-auth alone's)",
  );
}

export async function measureObservability(upstreamUrl: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-observe-'));
  try {
    await measureSideBySide(upstreamUrl, dir, opts);
    await measureProfiles(upstreamUrl, dir, opts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The four data planes side by side, loaded in alternating rounds. */
async function measureSideBySide(upstreamUrl: string, dir: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const variants = VARIANTS;
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
  }
}
