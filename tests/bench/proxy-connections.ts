// Proxy connection limits (decision 31) against the code before them (BENCH_BASE_COMMIT, default 5a0aad8), checked
// out in a temporary git worktree and started the same way:
//   `connection-limits`: key-auth throughput of the data plane with the limits against the base's, in alternating
//     rounds (target ≥ 0.95×), with the data plane's CPU per request;
//   `rapid-reset`: the longest answer time of an honest HTTP/2 client while 16 connections reset streams as fast as
//     they can (CVE-2023-44487), for each data plane.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ClientHttp2Session } from 'node:http2';
import { fileURLToPath } from 'node:url';
import { here, printTable, startScript, type Started } from './harness';
import { interleaved, medianRoundRatio, micros } from './interleaved';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A checkout of `commit` with its dependencies installed from the local store; removed by `remove()`. */
export interface BaseTree {
  dir: string;
  commit: string;
  remove(): void;
}

export function checkoutBase(commit = process.env.BENCH_BASE_COMMIT ?? '5a0aad8'): BaseTree {
  const parent = mkdtempSync(join(tmpdir(), 'gatehouse-bench-base-'));
  const dir = join(parent, 'tree');
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  const remove = () => {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  };
  try {
    execFileSync('pnpm', ['install', '--offline', '--frozen-lockfile'], { cwd: dir, stdio: 'ignore' });
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, commit, remove };
}

/** The same server script from this tree and from the base tree. */
async function startBoth(base: BaseTree, script: string, env: Record<string, string>, ready?: RegExp): Promise<[Started, Started]> {
  const ours = await startScript(here(script), env, ready);
  try {
    return [ours, await startScript(join(base.dir, 'tests/bench', script), env, ready)];
  } catch (err) {
    await ours.stop();
    throw err;
  }
}

export async function measureConnectionLimits(upstreamUrl: string, base: BaseTree, opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const [ours, theirs] = await startBoth(base, 'servers/dataplane-key-auth.ts', { UPSTREAM_URL: upstreamUrl, API_KEY: opts.apiKey });
  try {
    const rows = await interleaved(
      [
        { name: `key-auth, before the limits (${base.commit})`, url: `http://127.0.0.1:${theirs.port}/bench`, pid: theirs.child.pid!, headers: { apikey: opts.apiKey } },
        { name: 'key-auth, with the connection limits', url: `http://127.0.0.1:${ours.port}/bench`, pid: ours.child.pid!, headers: { apikey: opts.apiKey } },
      ],
      opts,
    );
    const [before, after] = rows as [(typeof rows)[number], (typeof rows)[number]];
    console.log('\nconnection limits: key-auth throughput against the code before them (target ≥ 0.95×)');
    printTable(rows, before);
    for (const r of rows) console.log(`${r.name}: rounds ${r.rounds.map((x) => x.toFixed(0)).join(', ')} req/s; data plane CPU ${micros(r.serverCpuUs)} per request`);
    const median = medianRoundRatio(after.rounds, before.rounds);
    const cpu = medianRoundRatio(after.cpuRounds, before.cpuRounds, false);
    console.log(
      `with the limits / before: ${(after.rps / before.rps).toFixed(2)}× in req/s over all rounds, median of the rounds' ratios ${median === null ? 'n/a' : `${median.toFixed(2)}×`}; ` +
        `by CPU per request ${cpu === null ? 'n/a' : `${cpu.toFixed(2)}×`}`,
    );
  } finally {
    await Promise.all([ours.stop(), theirs.stop()]);
  }
}

/** One GET over `session`; its answer time in ms, or null when none came within `timeoutMs`. */
function timedGet(session: ClientHttp2Session, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const started = performance.now();
    let stream: ReturnType<ClientHttp2Session['request']>;
    try {
      stream = session.request({ ':path': '/bench' });
    } catch {
      return resolve(null);
    }
    const timer = setTimeout(() => {
      stream.close();
      resolve(null);
    }, timeoutMs);
    stream.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    stream.resume();
    stream.on('end', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
  });
}

interface HonestClient {
  answers: number;
  /** requests with no answer within the timeout (or refused) */
  unanswered: number;
  longestMs: number;
}

/** Sequential GETs over one HTTP/2 connection (a new one when it fails) until `until`. */
async function honestClient(tlsPort: number, until: number, timeoutMs: number): Promise<HonestClient> {
  const result: HonestClient = { answers: 0, unanswered: 0, longestMs: 0 };
  let session: ClientHttp2Session | null = null;
  while (Date.now() < until) {
    if (session === null || session.closed || session.destroyed) {
      session = connect(`https://127.0.0.1:${tlsPort}`, { rejectUnauthorized: false });
      session.on('error', () => {});
    }
    const ms = await timedGet(session, timeoutMs);
    if (ms === null) {
      result.unanswered++;
      result.longestMs = Math.max(result.longestMs, timeoutMs);
      session.destroy();
      session = null;
    } else {
      result.answers++;
      result.longestMs = Math.max(result.longestMs, ms);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  session?.destroy();
  return result;
}

/** The honest client alone for a second, then under an attack of `connections` connections for `seconds`. */
async function underAttack(tlsPort: number, seconds: number, connections: number): Promise<{ idle: HonestClient; attacked: HonestClient; attacker: string }> {
  const idle = await honestClient(tlsPort, Date.now() + 1000, 10_000);
  const attacker = await startScript(here('servers/rapid-reset-attacker.ts'), { PORT: String(tlsPort), CONNECTIONS: String(connections), SECONDS: String(seconds) }, /(ATTACKING)/);
  const exited = new Promise<string>((resolve) => {
    let out = '';
    attacker.child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    attacker.child.once('exit', () => resolve(out.trim().split('\n').pop() ?? ''));
  });
  const attacked = await honestClient(tlsPort, Date.now() + seconds * 1000, 10_000);
  const counts = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('(attacker still running)'), 15_000))]);
  await attacker.stop();
  return { idle, attacked, attacker: counts };
}

export async function measureRapidReset(upstreamUrl: string, base: BaseTree, opts: { seconds: number }): Promise<void> {
  const connections = 16;
  console.log(`\nHTTP/2 rapid reset: an honest client's sequential requests while ${connections} connections reset streams for ${opts.seconds} s (no answer within 10 s counts as 10 s)`);
  for (const [label, tree] of [
    ['with the connection limits', null],
    [`before them (${base.commit})`, base],
  ] as const) {
    const script = tree === null ? here('servers/dataplane-tls.ts') : join(tree.dir, 'tests/bench/servers/dataplane-tls.ts');
    const dp = await startScript(script, { UPSTREAM_URL: upstreamUrl }, /LISTENING \d+ TLS (\d+)/);
    try {
      const r = await underAttack(dp.port, opts.seconds, connections);
      console.log(
        `${label.padEnd(38)} longest answer ${r.attacked.longestMs.toFixed(1)} ms under attack (${r.attacked.answers} answered, ${r.attacked.unanswered} unanswered); ` +
          `${r.idle.longestMs.toFixed(1)} ms alone; attacker ${r.attacker}`,
      );
    } finally {
      await dp.stop();
    }
  }
}
