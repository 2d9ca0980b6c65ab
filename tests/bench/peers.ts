// BENCH_ONLY=peers: the data plane against the proxies a Kong user would otherwise run, on this machine, loopback only.
// Each peer does the same job on `/api/*` (check the `apikey` header, add x-consumer-id / x-consumer-username, proxy to
// an nginx upstream answering `hello world`): nginx with a `map` key check, the minimal Node forwarder
// (servers/peer-forwarder.mjs: node:http + undici Pool.stream), and the real `gatehouse data-plane` with key-auth and
// its default settings (access log on). With two cores or more, each peer is pinned to one core and wrk plus the
// upstream share another. Peers are loaded in interleaved rounds (BENCH_ROUNDS, default 3), each cell is the median of
// the rounds with their spread, and the ratios are against nginx and the forwarder measured in the same run. The
// targets of the data-plane speed work: ≥ 1.3× the forwarder, ≥ 0.45× nginx, p99 ≤ 1.5× nginx's.
// BENCH_PROFILE=1 also profiles the data plane (V8's CPU profiler, over every round) and prints its top 15 frames.
// Needs Debian's nginx and wrk; without them the scenario says so and measures nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, freePorts, makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, SHARED_REDIS_URL, uniqueRedisPrefix } from '@gatehouse/testkit';
import { RedisBus, signSnapshot } from '../../packages/sync/src';
import { here } from './harness';
import { processCpuMs } from './interleaved';
import { topFrames } from './profile-share';

const API_KEY = 'benchkey:benchsecret';
const PATH = '/api/hello';

interface Peer {
  name: string;
  port: number;
  /** the status a request without a key gets (the interface document gives Gatehouse's) */
  noKeyStatus: number[];
  child?: ChildProcess;
}

interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** the peer's CPU time (user + system, its whole process tree) per request, µs; NaN where /proc cannot be read */
  cpuUs: number;
}

const onPath = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

function nginxConf(port: number, body: string): string {
  return `worker_processes 1;
pid nginx.pid;
events { worker_connections 8192; }
http {
  access_log off;
  default_type text/plain;
  keepalive_requests 10000000;
  keepalive_timeout 75s;
  client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fcgi;
  uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
${body.replaceAll('LISTEN', `listen 127.0.0.1:${port} backlog=4096;`)}
}
`;
}

const UPSTREAM_BODY = `  server {
    LISTEN
    location = /api/_echo { return 200 "id=$http_x_consumer_id user=$http_x_consumer_username\\n"; }
    location / { return 200 "hello world\\n"; }
  }`;

const keyAuthBody = (upstreamPort: number) => `  map $http_apikey $consumer_id { default ""; "${API_KEY}" "c-0001"; }
  map $http_apikey $consumer_username { default ""; "${API_KEY}" "bench-user"; }
  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 128; keepalive_requests 10000000; }
  server {
    LISTEN
    location /api/ {
      if ($consumer_id = "") { return 401 "invalid or missing apikey\\n"; }
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header x-consumer-id $consumer_id;
      proxy_set_header x-consumer-username $consumer_username;
    }
    location / { return 404; }
  }`;

/** `taskset -c <core>` in front of a command when the machine has a core to spare for the load */
const pinned = (core: number | null, argv: string[]) => (core === null ? argv : ['taskset', '-c', String(core), ...argv]);

function startProcess(argv: string[], opts: { env?: Record<string, string>; log: string; cwd?: string }): ChildProcess {
  const out = openSync(opts.log, 'a');
  return spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdio: ['ignore', out, out] });
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function waitFor(what: string, check: () => Promise<boolean>, seconds = 60): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} was not ready within ${seconds} s`);
}

/** The correctness check of every peer before any load: the key, its absence, a wrong key, the consumer headers. */
async function checkPeer(peer: Peer): Promise<string[]> {
  const base = `http://127.0.0.1:${peer.port}`;
  const problems: string[] = [];
  const good = await fetch(base + PATH, { headers: { apikey: API_KEY } });
  const goodBody = await good.text();
  if (good.status !== 200 || goodBody !== 'hello world\n') problems.push(`good key ${good.status}`);
  const none = await fetch(base + PATH);
  await none.arrayBuffer();
  if (!peer.noKeyStatus.includes(none.status)) problems.push(`no key ${none.status}`);
  const wrong = await fetch(base + PATH, { headers: { apikey: 'wrong:key' } });
  await wrong.arrayBuffer();
  if (wrong.status !== 401) problems.push(`wrong key ${wrong.status}`);
  const echo = await (await fetch(`${base}/api/_echo`, { headers: { apikey: API_KEY } })).text();
  if (!/^id=\S+ user=bench-user$/.test(echo.trim())) problems.push(`consumer headers '${echo.trim()}'`);
  return problems;
}

const toMs = (v: string): number => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
};

function runWrk(port: number, core: number | null, connections: number, seconds: number, pid?: number): Round {
  const argv = pinned(core, ['wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', `apikey: ${API_KEY}`, `http://127.0.0.1:${port}${PATH}`]);
  const cpu0 = pid === undefined ? null : processCpuMs(pid);
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  const cpu1 = pid === undefined ? null : processCpuMs(pid);
  const text = r.stdout;
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? Number.NaN);
  const cpuUs = cpu0 === null || cpu1 === null ? Number.NaN : ((cpu1 - cpu0) * 1000) / requests;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? Number.NaN);
  const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(text)?.[1] ?? '');
  const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(text)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const socketErrors = /Socket errors: (.*)/.exec(text)?.[1]?.match(/\d+/g)?.reduce((a, b) => a + Number(b), 0) ?? 0;
  return { rps, p50, p99, errors: non2xx + socketErrors, cpuUs };
}

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function measurePeers(opts: { connections: number; seconds: number; rounds: number }): Promise<void> {
  if (!onPath('nginx') || !onPath('wrk')) {
    console.log('peers: skipped, this scenario needs nginx and wrk on the PATH (Debian packages nginx-light, wrk)');
    return;
  }
  const cores = availableParallelism();
  const gwCore = cores >= 2 ? 1 : null;
  const loadCore = cores >= 2 ? 0 : null;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-peers-'));
  const [upstreamPort, nginxPort, forwarderPort, gatehousePort] = await freePorts(4);
  const children: ChildProcess[] = [];
  const secret = randomBytes(32).toString('hex');
  const prefix = uniqueRedisPrefix('bench-peers');
  const bus = new RedisBus({ url: SHARED_REDIS_URL, prefix });
  const startNginx = (name: string, core: number | null, body: string, port: number) => {
    const prefixDir = join(dir, name);
    mkdirSync(join(prefixDir, 'tmp'), { recursive: true });
    writeFileSync(join(prefixDir, 'nginx.conf'), nginxConf(port, body));
    const child = startProcess(pinned(core, ['nginx', '-p', `${prefixDir}/`, '-e', 'stderr', '-c', join(prefixDir, 'nginx.conf'), '-g', 'daemon off;']), { log: join(dir, `${name}.log`) });
    children.push(child);
    return child;
  };
  try {
    startNginx('upstream', loadCore, UPSTREAM_BODY, upstreamPort!);
    const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
    await waitFor('the nginx upstream', async () => (await fetch(`${upstreamUrl}/`)).ok);

    const peers: Peer[] = [
      { name: 'nginx, map key check', port: nginxPort!, noKeyStatus: [401], child: startNginx('nginx', gwCore, keyAuthBody(upstreamPort!), nginxPort!) },
      {
        name: 'minimal Node forwarder',
        port: forwarderPort!,
        noKeyStatus: [401],
        child: startProcess(pinned(gwCore, [process.execPath, here('servers/peer-forwarder.mjs')]), {
          env: { PORT: String(forwarderPort), UPSTREAM_URL: upstreamUrl, API_KEY },
          log: join(dir, 'forwarder.log'),
        }),
      },
    ];
    // the data plane serves what the bus holds, published as the control plane would
    const profileDir = join(dir, 'profile');
    const profileFlags = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const service = makeService({ name: 'bench', url: upstreamUrl });
    const route = makeRoute({ paths: ['/api'], strip_path: false, service: { id: service.id } });
    const consumer = makeConsumer({ username: 'bench-user' });
    const keyAuth = makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} });
    const credentials = { keyauth_credentials: [makeCredential(consumer, { key: API_KEY })] };
    await bus.publish(signSnapshot(makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins: [keyAuth], credentials }, 1), secret));
    peers.push({
      name: 'gatehouse data plane, key-auth, defaults',
      port: gatehousePort!,
      // the interface document answers a request without a key with 403
      noKeyStatus: [403],
      child: startProcess(pinned(gwCore, [process.execPath, ...profileFlags, '--import', 'tsx', here('../../packages/cli/src/main.ts'), 'data-plane']), {
        cwd: here('../..'),
        env: {
          REDIS_URL: SHARED_REDIS_URL,
          GATEHOUSE_REDIS_PREFIX: prefix,
          GATEHOUSE_CLUSTER_SECRET: secret,
          GATEHOUSE_WORKERS: '1',
          GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${gatehousePort}`,
          GATEHOUSE_STATUS_LISTEN: 'off',
          GATEHOUSE_PROXY_TLS_LISTEN: 'off',
          GATEHOUSE_LOG_LEVEL: 'warn',
          GATEHOUSE_DATA_DIR: join(dir, 'dp'),
        },
        log: join(dir, 'gatehouse.log'),
      }),
    });
    children.push(...peers.map((p) => p.child!));
    for (const peer of peers) {
      await waitFor(peer.name, async () => (await fetch(`http://127.0.0.1:${peer.port}${PATH}`, { headers: { apikey: API_KEY } })).status === 200);
      const problems = await checkPeer(peer);
      if (problems.length > 0) throw new Error(`peers: ${peer.name} fails its check: ${problems.join(', ')} (logs in ${dir})`);
    }
    console.log(`peers: ${opts.rounds} interleaved rounds of ${opts.seconds} s, wrk -t1 -c${opts.connections}, ${gwCore === null ? 'no pinning (one core)' : `peer on core ${gwCore}, wrk and upstream on core ${loadCore}`}`);
    const results = new Map<Peer, Round[]>(peers.map((p) => [p, []]));
    for (const peer of peers) runWrk(peer.port, loadCore, opts.connections, 3); // warm-up: JIT, pools
    const roundsStarted = Date.now();
    for (let round = 0; round < opts.rounds; round++) {
      for (const peer of peers) results.get(peer)!.push(runWrk(peer.port, loadCore, opts.connections, opts.seconds, peer.child?.pid));
    }
    printPeers(peers, results);
    if (profileFlags.length > 0) {
      await stopProcess(peers[2]!.child); // the profile is written as the process exits
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      console.log('\ndata plane under load, top 15 frames by self time:');
      for (const { frame, self } of file ? topFrames(join(profileDir, file), 15, Date.now() - roundsStarted) : []) console.log(`  ${(self * 100).toFixed(1).padStart(5)} %  ${frame}`);
    }
  } finally {
    await Promise.all(children.map(stopProcess));
    await bus.close();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function printPeers(peers: Peer[], results: Map<Peer, Round[]>): void {
  const cell = (p: Peer) => {
    const rounds = results.get(p)!;
    const rps = rounds.map((r) => r.rps);
    return { rps: median(rps), min: Math.min(...rps), max: Math.max(...rps), p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)), errors: rounds.reduce((a, r) => a + r.errors, 0), cpuUs: median(rounds.map((r) => r.cpuUs)) };
  };
  const cells = peers.map(cell);
  const [nginx, forwarder, dataPlane] = [cells[0]!, cells[1]!, cells[2]!];
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`${pad('peer, one core', 42)}${pad('req/s median (min–max)', 26)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('p99/p50', 9)}${pad('errors', 8)}${pad('× nginx', 9)}${pad('× forwarder', 13)}p99 × nginx`);
  for (const [i, p] of peers.entries()) {
    const c = cells[i]!;
    console.log(
      `${pad(p.name, 42)}${pad(`${c.rps.toFixed(0)} (${c.min.toFixed(0)}–${c.max.toFixed(0)})`, 26)}${pad(c.p50.toFixed(2), 9)}${pad(c.p99.toFixed(2), 9)}${pad((c.p99 / c.p50).toFixed(2), 9)}${pad(String(c.errors), 8)}${pad(`${(c.rps / nginx.rps).toFixed(2)}×`, 9)}${pad(`${(c.rps / forwarder.rps).toFixed(2)}×`, 13)}${(c.p99 / nginx.p99).toFixed(2)}×`,
    );
  }
  console.log('targets for the data plane: ≥ 0.45× nginx, ≥ 1.30× the forwarder, p99 ≤ 1.50× nginx');
  // wrk keeps every connection busy, so a peer's mean latency is connections ÷ req/s: its latencies scale with the
  // inverse of its speed, and its p99 against nginx's is about that inverse times the ratio of their spreads (p99/p50)
  const spread = dataPlane.p99 / dataPlane.p50 / (nginx.p99 / nginx.p50);
  console.log(
    `p99 × nginx ≈ (nginx req/s ÷ gatehouse req/s) ${(nginx.rps / dataPlane.rps).toFixed(2)} × (spread ratio, p99/p50 against nginx's) ${spread.toFixed(2)}: ` +
      `at nginx's spread, p99 ≤ 1.50× nginx needs ≥ ${(1 / 1.5).toFixed(2)}× its req/s`,
  );
  // each peer's own cost per request, which depends less than req/s on how busy the load side of the machine is
  const cpu = cells.map((c) => c.cpuUs);
  if (cpu.every(Number.isFinite)) {
    const gatehouse = cpu[2]!;
    console.log(
      `CPU per request (user + system, median round): nginx ${cpu[0]!.toFixed(1)} µs, forwarder ${cpu[1]!.toFixed(1)} µs, gatehouse ${gatehouse.toFixed(1)} µs; ` +
        `by CPU, gatehouse is ${(cpu[0]! / gatehouse).toFixed(2)}× nginx and ${(cpu[1]! / gatehouse).toFixed(2)}× the forwarder`,
    );
  }
}
