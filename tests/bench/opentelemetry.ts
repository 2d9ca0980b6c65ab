// The cost of tracing on the proxy (BENCH_ONLY=opentelemetry): key-auth + opentelemetry with every instrumentation
// on and sampling 1.0, exporting OTLP/HTTP to a local collector that decodes every batch, against key-auth alone with
// tracing off (target ≥ 0.85×). The spans the collector decoded are counted, so the export is shown to happen.
import { here, load, printTable, startScript, type LoadResult } from './harness';

async function measure(upstreamUrl: string, collectorUrl: string, name: string, scenario: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<LoadResult> {
  const server = await startScript(here('servers/dataplane-tracing.ts'), { UPSTREAM_URL: upstreamUrl, COLLECTOR_URL: collectorUrl, API_KEY: opts.apiKey, SCENARIO: scenario });
  try {
    return await load(name, `http://127.0.0.1:${server.port}/bench`, { connections: opts.connections, seconds: opts.seconds, headers: { apikey: opts.apiKey } });
  } finally {
    await server.stop();
  }
}

export async function benchOpenTelemetry(opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  const upstream = await startScript(here('servers/upstream.ts'));
  const collector = await startScript(here('servers/otlp-sink.ts'));
  const collectorUrl = `http://127.0.0.1:${collector.port}/v1/traces`;
  try {
    const base = await measure(`http://127.0.0.1:${upstream.port}`, collectorUrl, 'key-auth alone (tracing off)', 'key-auth', opts);
    const traced = await measure(`http://127.0.0.1:${upstream.port}`, collectorUrl, 'key-auth + opentelemetry (all, 1.0)', 'key-auth-otel', opts);
    const spans = Number(await (await fetch(`http://127.0.0.1:${collector.port}/count`)).text());
    console.log('\nkey-auth + opentelemetry (sampling 1.0, local collector) vs key-auth alone (target ≥ 0.85×)');
    printTable([base, traced], base);
    console.log(`(the collector decoded ${spans} spans)`);
  } finally {
    await collector.stop();
    await upstream.stop();
  }
}
