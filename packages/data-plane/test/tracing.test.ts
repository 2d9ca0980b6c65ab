// Tracing through a real data plane: the spans it records per GATEHOUSE_TRACING_INSTRUMENTATIONS (none when `off`,
// the listed stages otherwise) as the opentelemetry plugin exports them to a local OTLP collector, and the headers
// sent upstream in each mode.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeOpenTelemetryExporters, parseTracingInstrumentations, PluginQueues } from '@gatehouse/plugins';
import { makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, startOtlpCollector, type EchoUpstream, type OtlpCollector } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer } from '../src';
import { quietLog, send } from './harness';

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');

async function waitFor(what: string, check: () => boolean): Promise<void> {
  const until = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('tracing instrumentations on the data plane', () => {
  let upstream: EchoUpstream;
  let collector: OtlpCollector;
  let off: DataPlaneServer;
  let listed: DataPlaneServer;
  const queues = new PluginQueues({ error: () => {}, warn: () => {}, info: () => {} });

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    collector = await startOtlpCollector();
    const service = makeService({ name: 'traced', url: upstream.url });
    const route = makeRoute({ paths: ['/traced'], service: { id: service.id } });
    const plugins = [
      makePlugin({ name: 'opentelemetry', service: { id: service.id }, config: { traces_endpoint: collector.url, queue: { max_batch_size: 50, max_coalescing_delay: 0.05 } } }),
      makePlugin({ name: 'response-transformer', service: { id: service.id }, config: { add: { headers: ['x-traced:yes'] } } }),
    ];
    const snapshot = makeSnapshot({ services: [service], routes: [route], plugins });
    const start = (instrumentations: string) =>
      createDataPlaneServer({
        holder: new ConfigHolder(compile(snapshot)),
        listen: { host: '127.0.0.1', port: 0 },
        log: quietLog,
        runtime: { queues },
        tracing: { instrumentations: parseTracingInstrumentations(instrumentations), samplingRate: 1 },
      });
    off = await start('off');
    listed = await start('router,plugin_header_filter');
  });

  afterAll(async () => {
    await off?.close();
    await listed?.close();
    await queues.close();
    await closeOpenTelemetryExporters();
    await upstream?.close();
    await collector?.close();
  });

  it('with `off` the plugin only propagates: same trace, new parent, not sampled, nothing exported', async () => {
    const traceId = hex(32);
    const parent = hex(16);
    const res = await send(off.port, '/traced/a', { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    expect(res.headers['x-traced']).toBe('yes');
    const sent = String(res.json.headers.traceparent);
    expect(sent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(sent).not.toContain(parent);
    // a traced request through the other data plane reaches the collector; the first one never does
    const later = hex(32);
    await send(listed.port, '/traced/b', { headers: { traceparent: `00-${later}-${hex(16)}-01` } });
    await waitFor('the later trace', () => collector.spans.some((s) => s.traceId === later));
    expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  it('with a list, only the request span and the listed stages are recorded; the request span goes upstream', async () => {
    const traceId = hex(32);
    const res = await send(listed.port, '/traced/c', { headers: { traceparent: `00-${traceId}-${hex(16)}-01` } });
    await waitFor('three spans', () => collector.spans.filter((s) => s.traceId === traceId).length >= 3);
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    expect(spans.map((s) => s.name).sort()).toEqual(['kong', 'kong.header_filter.plugin.response-transformer', 'kong.router']);
    const root = spans.find((s) => s.name === 'kong')!;
    // no balancer instrumentation: the upstream's parent is the request span
    expect(String(res.json.headers.traceparent)).toBe(`00-${traceId}-${root.spanId}-01`);
    expect(root.attributes['http.route']).toBe('/traced');
  });
});
