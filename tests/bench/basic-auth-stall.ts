// basic-auth under wrong-password traffic (hardening issue, point 3): a public route's p99 while 20 wrong-password
// requests per second hit a basic-auth route of the same data plane, against the same route's p99 with no such
// traffic, both measured in this run. Target: ratio ≤ 2× (bcrypt runs on libuv's pool, never on the event loop).
// Also prints the timing-oracle figure: the median answer time of a known username with a wrong password against an
// unknown username (target: close to 1×, both pay one bcrypt comparison).
import autocannon from 'autocannon';
import { request } from 'undici';
import { here, startScript } from './harness';

export interface BasicAuthStallResult {
  idleP99: number;
  loadedP99: number;
  ratio: number;
  attackerSent: number;
  attackerStatuses: Record<string, number>;
  knownUserP50: number;
  unknownUserP50: number;
}

const ATTACK_PER_SECOND = 20;

function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Fires ATTACK_PER_SECOND wrong-password requests a second (not waiting for answers), alternating a known and an unknown username. */
function startAttacker(url: string) {
  const statuses: Record<string, number> = {};
  const known: number[] = [];
  const unknown: number[] = [];
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const knownUser = sent % 2 === 0;
    sent++;
    const started = performance.now();
    const p = request(url, { headers: { authorization: basic(knownUser ? 'bench' : `nobody-${sent}`, `wrong-${sent}`) } })
      .then(async (res) => {
        await res.body.dump();
        (knownUser ? known : unknown).push(performance.now() - started);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      })
      .catch(() => {
        statuses.error = (statuses.error ?? 0) + 1;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / ATTACK_PER_SECOND);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { sent, statuses, knownP50: median(known), unknownP50: median(unknown) };
    },
  };
}

/** A steady, rate-limited load on the public route: latency, not throughput, is what is measured. */
async function publicP99(url: string, seconds: number): Promise<number> {
  const r = await autocannon({ url, connections: 10, overallRate: 200, duration: seconds });
  if (r.errors + r.timeouts > 0 || r.non2xx > 0) throw new Error(`public route: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`);
  return r.latency.p99;
}

export async function measureBasicAuthStall(upstreamUrl: string, seconds: number): Promise<BasicAuthStallResult> {
  const server = await startScript(here('servers/dataplane-basic-auth.ts'), { UPSTREAM_URL: upstreamUrl });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    await autocannon({ url: `${base}/public`, connections: 10, duration: 2 }); // warm-up
    const idleP99 = await publicP99(`${base}/public`, seconds);
    const attacker = startAttacker(`${base}/login`);
    const loaded = await publicP99(`${base}/public`, seconds).then(
      (p99) => ({ p99, error: null }),
      (error: unknown) => ({ p99: NaN, error }),
    );
    const attack = await attacker.stop();
    if (loaded.error !== null) throw loaded.error;
    const loadedP99 = loaded.p99;
    return {
      idleP99,
      loadedP99,
      ratio: loadedP99 / Math.max(idleP99, 1),
      attackerSent: attack.sent,
      attackerStatuses: attack.statuses,
      knownUserP50: attack.knownP50,
      unknownUserP50: attack.unknownP50,
    };
  } finally {
    await server.stop();
  }
}

export function printBasicAuthStall(r: BasicAuthStallResult): void {
  console.log(
    `\nbasic-auth under ${ATTACK_PER_SECOND} wrong-password req/s (${r.attackerSent} sent, statuses ${JSON.stringify(r.attackerStatuses)}): ` +
      `public route p99 ${r.loadedP99} ms vs ${r.idleP99} ms idle = ${r.ratio.toFixed(2)}× (target ≤ 2×)`,
  );
  console.log(
    `basic-auth timing oracle: known user + wrong password p50 ${r.knownUserP50.toFixed(1)} ms, unknown user p50 ${r.unknownUserP50.toFixed(1)} ms = ${(r.knownUserP50 / r.unknownUserP50).toFixed(2)}× (target ≈ 1×)`,
  );
}
