// `pnpm bench`: every figure of one run is measured on this machine, in this run, and printed as a ratio against
// a baseline measured in the same run. Each server runs as its own process; the load generator (autocannon) runs here.
//   BENCH_SECONDS (default 10) per target, BENCH_CONNECTIONS (default 50), BENCH_ONLY (comma-separated target names)
//   BENCH_SCALE_N (default 100000) and BENCH_SCALE_SMALL (default 100): the consumer counts of the `scale` scenario
//   BENCH_CONFIG_CONSUMERS (default 100000): the consumer count of the `admin-config` scenario's second document
//   BENCH_ROUNDS (default 2): alternating rounds of the side-by-side scenarios (tls, observability), for a noisy machine
//   BENCH_ROUTER_SMALL (default 100) and BENCH_ROUTER_N (default 10000): the route counts of the `router` scenario
//   BENCH_ONLY=opentelemetry: key-auth + opentelemetry (sampling 1.0, local collector) against key-auth alone
//   BENCH_DBLESS_CONSUMERS (default 100000): the consumer count of the `dbless` scenario's POST /config
//   BENCH_ONLY=grpc: gRPC unary calls through the data plane vs direct (and gRPC-Web calls through the grpc-web plugin); BENCH_ONLY=stream: TCP MB/s through it vs direct;
//   BENCH_ONLY=websocket: WebSocket messages/s relayed vs direct
//   BENCH_ONLY=peers: nginx (map key check), the minimal Node forwarder and the data plane, one core each, wrk,
//     interleaved rounds (BENCH_ROUNDS, default 3 here), ratios to nginx and to the forwarder with their spread
//   BENCH_ONLY=expressions-router: match cost of BENCH_ROUTER_N expression routes vs as many traditional routes
//   BENCH_BASE_COMMIT (default 5a0aad8): the code the connection-limits and rapid-reset scenarios compare against
//   BENCH_ONLY=house: key-auth throughput and write → served at BENCH_HOUSE_N consumers (default 100000), a CP + DP
//     cluster of this tree against one of BENCH_HOUSE_BASE (default 3b349a1), alternating rounds (BENCH_ROUNDS, default
//     5 here), BENCH_HOUSE_WRITES (default 5) writes → served a round
import { existsSync } from 'node:fs';
import { here, load, printTable, startScript, type LoadResult } from './harness';
import { measurePropagation } from './propagation';
import { measureBasicAuthStall, printBasicAuthStall } from './basic-auth-stall';
import { measureDeclarative, printDeclarative } from './declarative';
import { measureConfigBounds, printConfigBounds } from './admin-config-bounds';
import { measureSyncFaults } from './sync-faults';
import { benchTrafficPlugins } from './traffic-plugins';
import { benchOpenTelemetry } from './opentelemetry';
import { benchAiProxy } from './ai-proxy';
import { benchLua } from './lua';
import { runBalancingBench } from './balancing';
import { measureTls } from './tls';
import { measureObservability } from './observability';
import { formatStartup, measureStartup } from './startup';
import { formatDbless, measureDbless } from './dbless';
import { measureWorkers, printWorkers } from './workers';
import { measureScale } from './scale';
import { measureRouter, printRouter } from './router';
import { measureExpressionsRouter, printExpressionsRouter } from './expressions-router';
import { measureGrpc } from './grpc';
import { measureStream } from './stream';
import { measureWebSocket } from './websocket';
import { measurePeers } from './peers';
import { measureHouse } from './house';
import { checkoutBase, measureConnectionLimits, measureRapidReset, type BaseTree } from './proxy-connections';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
// the proxy targets are picked by a part of their name; `house` is a scenario, not the part every one has (`gatehouse …`)
const targetParts = only?.filter((o) => o !== 'house');
const API_KEY = 'bench-key';

interface Target {
  name: string;
  script: string;
  env?: Record<string, string>;
  headers?: Record<string, string>;
  /** where extra setup lives (optional scenario scripts) */
  optional?: boolean;
}

const targets: Target[] = [
  { name: '(b) undici forwarder + Map key check', script: 'servers/forwarder-undici.ts', headers: { apikey: API_KEY } },
  { name: '(c) http-proxy forwarder + Map key check', script: 'servers/forwarder-http-proxy.ts', headers: { apikey: API_KEY } },
  { name: 'gatehouse data plane, key-auth (http1)', script: 'servers/dataplane-key-auth.ts', headers: { apikey: API_KEY } },
  { name: 'gatehouse data plane, key-auth (undici)', script: 'servers/dataplane-key-auth.ts', env: { FORWARDER: 'undici' }, headers: { apikey: API_KEY } },
  { name: 'gatehouse data plane, key-auth (http-proxy)', script: 'servers/dataplane-key-auth.ts', env: { FORWARDER: 'http-proxy' }, headers: { apikey: API_KEY } },
  { name: 'gatehouse, key-auth + rate-limiting local', script: 'servers/dataplane-rate-limiting-local.ts', headers: { apikey: API_KEY }, optional: true },
  { name: 'gatehouse, key-auth + rate-limiting redis', script: 'servers/dataplane-rate-limiting-redis.ts', headers: { apikey: API_KEY }, optional: true },
  { name: 'gatehouse, jwt HS256', script: 'servers/dataplane-jwt.ts', optional: true },
];

async function main(): Promise<void> {
  console.log(`gatehouse bench: ${seconds}s per target, ${connections} connections, node ${process.version}\n`);
  const rows: LoadResult[] = [];
  // the proxy targets share one upstream; a run that selects none of them does not start it
  const proxyRun = !only || only.includes('direct') || targets.some((t) => targetParts!.some((o) => t.name.includes(o)));
  const upstream = proxyRun ? await startScript(here('servers/upstream.ts')) : null;
  const upstreamUrl = `http://127.0.0.1:${upstream?.port}`;
  if (upstream) try {
    if (!only || only.includes('direct')) rows.push(await load('(a) upstream directly', `${upstreamUrl}/bench`, { connections, seconds }));
    for (const t of targets) {
      if (targetParts && !targetParts.some((o) => t.name.includes(o))) continue;
      if (t.optional && !existsSync(here(t.script))) continue;
      const server = await startScript(here(t.script), { UPSTREAM_URL: upstreamUrl, API_KEY, ...t.env });
      try {
        const extra = jwtHeaders(server.output);
        rows.push(await load(t.name, `http://127.0.0.1:${server.port}/bench`, { connections, seconds, headers: { ...t.headers, ...extra } }));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await upstream.stop();
  }
  const baseline = rows.find((r) => r.name.startsWith('(b)')) ?? rows[0];
  if (baseline) {
    console.log('');
    printTable(rows, baseline);
    const direct = rows.find((r) => r.name.startsWith('(a)'));
    if (direct) console.log(`\n(ratios against ${baseline.name}; the upstream alone served ${direct.rps.toFixed(0)} req/s)`);
    const keyAuth = rows.find((r) => r.name === 'gatehouse data plane, key-auth (http1)');
    if (keyAuth && baseline.name.startsWith('(b)')) {
      console.log(
        `hot path, one process: key-auth (default forwarder) ${(keyAuth.rps / baseline.rps).toFixed(2)}× the minimal undici forwarder's throughput (target ≥ 1.0×), ` +
          `p99 ${(keyAuth.p99 / baseline.p99).toFixed(2)}× its p99 (target ≤ 1.2×)`,
      );
    }
  }

  // first among the scenarios: it pins processes to cores and wants the machine as quiet as this run finds it
  if (!only || only.includes('peers')) await measurePeers({ connections, seconds, rounds: Number(process.env.BENCH_ROUNDS ?? 3) });

  if (!only || only.includes('workers')) {
    const workersUpstream = await startScript(here('servers/upstream.ts'));
    try {
      printWorkers(await measureWorkers(`http://127.0.0.1:${workersUpstream.port}`, { connections, seconds, apiKey: API_KEY }));
    } finally {
      await workersUpstream.stop();
    }
  }

  if (!only || only.includes('router')) printRouter(measureRouter());
  if (!only || only.includes('expressions-router')) printExpressionsRouter(measureExpressionsRouter());
  if (!only || only.includes('grpc')) await measureGrpc({ seconds, connections, rounds: Number(process.env.BENCH_ROUNDS ?? 2) });
  if (!only || only.includes('stream')) await measureStream({ seconds, rounds: Number(process.env.BENCH_ROUNDS ?? 2) });
  if (!only || only.includes('websocket')) await measureWebSocket({ seconds, rounds: Number(process.env.BENCH_ROUNDS ?? 2) });

  if (!only || only.includes('basic-auth-stall')) {
    const stallUpstream = await startScript(here('servers/upstream.ts'));
    try {
      printBasicAuthStall(await measureBasicAuthStall(`http://127.0.0.1:${stallUpstream.port}`, seconds));
    } finally {
      await stallUpstream.stop();
    }
  }
  if (!only || only.includes('traffic')) await benchTrafficPlugins({ connections, seconds, apiKey: API_KEY });
  if (!only || only.includes('opentelemetry')) await benchOpenTelemetry({ connections, seconds, apiKey: API_KEY });
  if (!only || only.includes('ai-proxy')) await benchAiProxy({ connections, seconds });
  if (!only || only.includes('lua')) await benchLua({ connections, seconds, apiKey: API_KEY });

  if (!only || only.includes('tls')) {
    const tlsUpstream = await startScript(here('servers/upstream.ts'));
    try {
      console.log('\nTLS on the proxy:');
      await measureTls(`http://127.0.0.1:${tlsUpstream.port}`, { seconds, connections });
    } finally {
      await tlsUpstream.stop();
    }
  }

  const wantsBase = ['connection-limits', 'rapid-reset'].filter((name) => !only || only.includes(name));
  if (wantsBase.length > 0) {
    const base: BaseTree = checkoutBase();
    const connUpstream = await startScript(here('servers/upstream.ts'));
    try {
      const url = `http://127.0.0.1:${connUpstream.port}`;
      if (wantsBase.includes('connection-limits')) await measureConnectionLimits(url, base, { connections, seconds, apiKey: API_KEY });
      if (wantsBase.includes('rapid-reset')) await measureRapidReset(url, base, { seconds });
    } finally {
      await connUpstream.stop();
      base.remove();
    }
  }

  if (!only || only.includes('house')) {
    const houseUpstream = await startScript(here('servers/upstream.ts'));
    try {
      await measureHouse(`http://127.0.0.1:${houseUpstream.port}`, { seconds, connections });
    } finally {
      await houseUpstream.stop();
    }
  }

  if (!only || only.includes('observability')) {
    const observedUpstream = await startScript(here('servers/upstream.ts'));
    try {
      await measureObservability(`http://127.0.0.1:${observedUpstream.port}`, { connections, seconds, apiKey: API_KEY });
    } finally {
      await observedUpstream.stop();
    }
  }

  if (!only || only.includes('propagation')) {
    const propagationUpstream = await startScript(here('servers/upstream.ts'));
    try {
      const p = await measurePropagation(`http://127.0.0.1:${propagationUpstream.port}`);
      console.log(
        `\nadmin write → served by both data planes (CP + 2 DPs over Redis, ${p.samples} writes): p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, max ${p.max.toFixed(1)} ms`,
      );
    } finally {
      await propagationUpstream.stop();
    }
  }

  if (!only || only.includes('scale')) {
    const scaleUpstream = await startScript(here('servers/upstream.ts'));
    try {
      await measureScale(`http://127.0.0.1:${scaleUpstream.port}`, { seconds, connections });
    } finally {
      await scaleUpstream.stop();
    }
  }

  if (!only || only.includes('declarative')) {
    const sizes = (process.env.BENCH_DECL_SIZES ?? '1000,10000,100000').split(',').map(Number);
    printDeclarative(await measureDeclarative(sizes));
  }

  if (!only || only.includes('admin-config')) {
    printConfigBounds(await measureConfigBounds(Number(process.env.BENCH_CONFIG_CONSUMERS ?? 100_000)));
  }

  if (!only || only.includes('sync-faults')) {
    const t = await measureSyncFaults();
    console.log(
      `\nsync under a Redis outage (median of ${t.samples}): publish rejected in ${t.publishDown.toFixed(1)} ms ` +
        `(${(t.publishDown / t.publishUp).toFixed(1)}× a publish with Redis up, ${t.publishUp.toFixed(1)} ms); data plane start from its cache ` +
        `${t.startDown.toFixed(1)} ms (${(t.startDown / t.startUp).toFixed(1)}× with Redis up, ${t.startUp.toFixed(1)} ms)`,
    );
  }

  if (!only || only.includes('balancing')) await runBalancingBench({ seconds, connections, apiKey: API_KEY });

  if (!only || only.includes('startup')) {
    const startupUpstream = await startScript(here('servers/upstream.ts'));
    try {
      const samples = await measureStartup(`http://127.0.0.1:${startupUpstream.port}`, 3, seconds * 1000);
      console.log(`
gatehouse start, sources through tsx vs the build (3 starts each, RSS after ${seconds}s idle):
${formatStartup(samples)}`);
    } finally {
      await startupUpstream.stop();
    }
  }

  if (!only || only.includes('dbless')) {
    const dblessUpstream = await startScript(here('servers/upstream.ts'));
    try {
      const figures = await measureDbless(`http://127.0.0.1:${dblessUpstream.port}`, 3, seconds * 1000, Number(process.env.BENCH_DBLESS_CONSUMERS ?? 100_000));
      console.log(`
gatehouse start without a database (GATEHOUSE_DATABASE=off, a declarative file) vs embedded PGlite (3 starts each, RSS after ${seconds}s idle):
${formatDbless(figures)}`);
    } finally {
      await dblessUpstream.stop();
    }
  }
}

/** a jwt scenario script prints `JWT <token>` before its LISTENING line; the token is sent as a bearer token */
function jwtHeaders(output: string): Record<string, string> {
  const m = /JWT (\S+)/.exec(output);
  return m ? { authorization: `Bearer ${m[1]}` } : {};
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
