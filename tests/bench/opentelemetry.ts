// The cost of tracing on the proxy (BENCH_ONLY=opentelemetry): key-auth + opentelemetry with every instrumentation
// on and sampling 1.0, exporting OTLP/HTTP to a local collector that decodes every batch, against key-auth alone with
// tracing off (target ≥ 0.85×), the same at sampling 0 (spans recorded, none exported) to tell recording from
// export, and with the request span alone (tracing_instrumentations=request) for the fixed cost of a traced request. The data planes run side by side and are loaded in alternating rounds (BENCH_ROUNDS);
// besides requests per second, each one's CPU time per request is printed, the figure a busy shared machine moves
// least. The collector (servers/otlp-sink.ts) shares the 2 cores with the data plane but is not the gateway: it counts
// the spans of every export request from their protobuf framing and decodes one request in 25 fully, checking those
// spans; its counts and any problem it found are printed, so the export is shown to happen and to be valid OTLP.
import { here, printTable, startScript, type Started } from './harness';
import { interleaved, medianRoundRatio, micros } from './interleaved';

const VARIANTS: Array<{ name: string; scenario: string; rate?: string; instrumentations?: string }> = [
  { name: 'key-auth alone (tracing off)', scenario: 'key-auth' },
  { name: 'key-auth + opentelemetry (all, 1.0)', scenario: 'key-auth-otel' },
  // spans recorded and the plugin run, nothing sampled: what recording costs without the export
  { name: 'key-auth + opentelemetry (all, 0.0)', scenario: 'key-auth-otel', rate: '0' },
  // the request span alone (tracing_instrumentations=request), exported: the fixed cost of a traced request
  { name: 'key-auth + opentelemetry (request, 1.0)', scenario: 'key-auth-otel', instrumentations: 'request' },
];

export async function benchOpenTelemetry(opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const upstream = await startScript(here('servers/upstream.ts'));
  const collector = await startScript(here('servers/otlp-sink.ts'));
  const servers: Started[] = [];
  try {
    for (const v of VARIANTS) {
      const env = { UPSTREAM_URL: `http://127.0.0.1:${upstream.port}`, COLLECTOR_URL: `http://127.0.0.1:${collector.port}/v1/traces`, API_KEY: opts.apiKey, SCENARIO: v.scenario, SAMPLING_RATE: v.rate ?? '1', INSTRUMENTATIONS: v.instrumentations ?? 'all' };
      servers.push(await startScript(here('servers/dataplane-tracing.ts'), env));
    }
    const contenders = VARIANTS.map((v, i) => ({ name: v.name, url: `http://127.0.0.1:${servers[i]!.port}/bench`, pid: servers[i]!.child.pid!, headers: { apikey: opts.apiKey } }));
    const [base, traced, unsampled, requestOnly] = await interleaved(contenders, opts);
    const collected = (await (await fetch(`http://127.0.0.1:${collector.port}/stats`)).json()) as { spans: number; requests: number; bytes: number; decoded: number; problems: string[] };
    console.log('\nkey-auth + opentelemetry (sampling 1.0, local collector) vs key-auth alone (target ≥ 0.85×)');
    printTable([base!, traced!, unsampled!, requestOnly!], base!);
    const rounds = medianRoundRatio(traced!.rounds, base!.rounds);
    const cpu = medianRoundRatio(traced!.cpuRounds, base!.cpuRounds, false);
    console.log(`sampling 1.0: median round ratio ${rounds?.toFixed(2) ?? 'n/a'}×, data-plane CPU per request ratio ${cpu?.toFixed(2) ?? 'n/a'}×`);
    const requestRounds = medianRoundRatio(requestOnly!.rounds, base!.rounds);
    console.log(`request span alone (tracing_instrumentations=request), sampling 1.0: median round ratio ${requestRounds?.toFixed(2) ?? 'n/a'}×`);
    console.log(`data-plane CPU per request: ${micros(base!.serverCpuUs)} alone, ${micros(traced!.serverCpuUs)} exporting, ${micros(unsampled!.serverCpuUs)} recording only, ${micros(requestOnly!.serverCpuUs)} exporting the request span alone`);
    console.log(`(the collector counted ${collected.spans} spans in ${collected.requests} export requests, ${(collected.bytes / 1e6).toFixed(1)} MB; decoded ${collected.decoded} of them: ${collected.problems.length === 0 ? 'all valid' : collected.problems.join('; ')})`);
  } finally {
    for (const s of servers) await s.stop();
    await collector.stop();
    await upstream.stop();
  }
}
