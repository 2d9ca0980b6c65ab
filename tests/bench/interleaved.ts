// Comparisons measured in turns on a shared machine: every contender is started before the first measurement, then
// loaded in rounds whose order alternates (A B C, C B A, …), so a change of the machine's load during the run weighs on
// every contender alike. Besides requests per second, the CPU time the server process spent per request is read
// from /proc (Linux; null elsewhere): that figure does not depend on what else shares the cores, the load generator
// included.
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadResult } from './harness';

export interface Contender {
  name: string;
  url: string;
  /** the server's process (with its children): its CPU time is read around each round */
  pid: number;
  headers?: Record<string, string>;
}

export interface InterleavedResult extends LoadResult {
  /** requests per second of each round, in round order */
  rounds: number[];
  /** the server's CPU time per request (µs) in each round, in round order; empty where /proc cannot be read */
  cpuRounds: number[];
  /** CPU time of the server process per request (µs); null where /proc cannot be read */
  serverCpuUs: number | null;
  /** CPU time of this process (the load generator) per request (µs) */
  clientCpuUs: number;
}

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/** the process and its descendants (their PIDs, the process first) */
export function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (listed !== '') children.push(...listed.split(/\s+/).map(Number));
  }
  return [pid, ...children.flatMap(processTree)];
}

/** user + system clock ticks of a `/proc/…/stat` file (a process's or one of its threads') */
function statTicks(path: string): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU time (user + system, ms) of a process and its descendants; null where /proc cannot be read */
export function processCpuMs(pid: number): number | null {
  try {
    return processTree(pid).reduce((ticks, p) => ticks + statTicks(`/proc/${p}/stat`), 0) * TICK_MS;
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) of one thread of a process (its main thread: `tid` = `pid`); null where /proc cannot be read */
export function threadCpuMs(pid: number, tid: number): number | null {
  try {
    return statTicks(`/proc/${pid}/task/${tid}/stat`) * TICK_MS;
  } catch {
    return null;
  }
}

/** Runs each of `contenders` once a round, in an order that alternates (A B C, C B A, …); each one's results in round order. */
export async function alternatingRounds<T>(contenders: Array<() => Promise<T>>, rounds: number): Promise<T[][]> {
  const results = contenders.map((): T[] => []);
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) results[i]!.push(await contenders[i]!());
  }
  return results;
}

export async function interleaved(contenders: Contender[], opts: { connections: number; seconds: number; rounds?: number }): Promise<InterleavedResult[]> {
  const rounds = opts.rounds ?? Number(process.env.BENCH_ROUNDS ?? 2);
  const perRound = Math.max(2, opts.seconds / rounds);
  const totals = contenders.map(() => ({ requests: 0, seconds: 0, serverMs: 0 as number | null, clientUs: 0, p50: [] as number[], p99: 0, errors: 0, non2xx: 0, rounds: [] as number[], cpuRounds: [] as number[] }));
  // warm-up: pools, JIT, TLS sessions
  for (const c of contenders) await autocannon({ url: c.url, connections: opts.connections, duration: 2, headers: c.headers });
  const measureRound = async (c: Contender, t: (typeof totals)[number]) => {
    const server0 = processCpuMs(c.pid);
    const client0 = process.cpuUsage();
    const r = await autocannon({ url: c.url, connections: opts.connections, duration: perRound, headers: c.headers });
    const client = process.cpuUsage(client0);
    const server1 = processCpuMs(c.pid);
    t.requests += r.requests.total;
    t.seconds += r.duration;
    t.serverMs = server0 === null || server1 === null || t.serverMs === null ? null : t.serverMs + (server1 - server0);
    t.clientUs += client.user + client.system;
    t.p50.push(r.latency.p50);
    t.p99 = Math.max(t.p99, r.latency.p99);
    t.errors += r.errors + r.timeouts;
    t.non2xx += r.non2xx;
    t.rounds.push(r.requests.total / r.duration);
    if (server0 !== null && server1 !== null && r.requests.total > 0) t.cpuRounds.push(((server1 - server0) * 1000) / r.requests.total);
  };
  await alternatingRounds(
    contenders.map((c, i) => () => measureRound(c, totals[i]!)),
    rounds,
  );
  return contenders.map((c, i) => {
    const t = totals[i]!;
    return {
      name: c.name,
      rps: t.requests / t.seconds,
      p50: Math.round(t.p50.reduce((a, b) => a + b, 0) / t.p50.length),
      p99: t.p99,
      errors: t.errors,
      non2xx: t.non2xx,
      rounds: t.rounds,
      cpuRounds: t.cpuRounds,
      serverCpuUs: t.serverMs === null || t.requests === 0 ? null : (t.serverMs * 1000) / t.requests,
      clientCpuUs: t.requests === 0 ? 0 : t.clientUs / t.requests,
    };
  });
}

/**
 * The median over rounds of `contender / baseline` (a round's figures of each, measured one after the other): a round
 * in which the machine slowed down for whichever contender ran then counts as one round, not as its share of the
 * totals. `higherIsBetter` false (CPU per request) inverts the ratio, so above 1× is always better.
 */
export function medianRoundRatio(contender: number[], baseline: number[], higherIsBetter = true): number | null {
  const n = Math.min(contender.length, baseline.length);
  if (n === 0) return null;
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) ratios.push(higherIsBetter ? contender[i]! / baseline[i]! : baseline[i]! / contender[i]!);
  ratios.sort((a, b) => a - b);
  return n % 2 === 1 ? ratios[(n - 1) / 2]! : (ratios[n / 2 - 1]! + ratios[n / 2]!) / 2;
}

/** `12.3 µs` or `n/a` */
export const micros = (us: number | null): string => (us === null ? 'n/a' : `${us.toFixed(1)} µs`);
