import { checkWith } from '@gatehouse/core';
import { startOtlpCollector, type OtlpCollector } from '@gatehouse/testkit';
import type { PluginContext } from '../contract';
import { fakeContext, fakeSummary } from '../../test/support/fake-context';
import { RequestSpans, SpanKind, parseTracingInstrumentations } from '../shared/tracing/request-spans';
import { closeOpenTelemetryExporters, openTelemetry } from './index';
import { checkOpenTelemetryConfig, openTelemetryConfigSchema, type OpenTelemetryConfig } from './schema';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const INCOMING_SPAN = 'b7ad6b7169203331';

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}


const config = (extra: Record<string, unknown> = {}): OpenTelemetryConfig =>
  openTelemetryConfigSchema.parse({ traces_endpoint: 'http://127.0.0.1:1/v1/traces', queue: { max_batch_size: 200, max_coalescing_delay: 0.05 }, ...extra });

describe('opentelemetry schema (Kong 3.9)', () => {
  it("has Kong's defaults", () => {
    const c = openTelemetryConfigSchema.parse({ traces_endpoint: 'http://collector:4318/v1/traces' });
    expect(c).toMatchObject({ connect_timeout: 1000, send_timeout: 5000, read_timeout: 5000, header_type: 'preserve', sampling_rate: null, propagation: { default_format: 'w3c' } });
    expect(c.queue).toMatchObject({ max_batch_size: 200, max_coalescing_delay: 1, max_entries: 10000 });
  });

  it("refuses an empty resource attribute with Kong's message", () => {
    expect(checkWith(openTelemetryConfigSchema, { endpoint: 'http://example.dev', resource_attributes: { foo: '' } })).toEqual({ ok: false, fields: { resource_attributes: 'length must be at least 1' } });
  });

  it('needs an endpoint (the deprecated `endpoint` counts) and a sampling rate between 0 and 1', () => {
    expect(checkOpenTelemetryConfig(openTelemetryConfigSchema.parse({}))).toEqual({ '@config': "at least one of these fields must be non-empty: 'traces_endpoint', 'logs_endpoint'" });
    expect(checkOpenTelemetryConfig(openTelemetryConfigSchema.parse({ endpoint: 'http://c:4318/v1/traces' }))).toBeNull();
    const bad = openTelemetryConfigSchema.safeParse({ traces_endpoint: 'http://c/v1/traces', sampling_rate: 2 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toBe('value should be between 0 and 1');
  });
});

describe('opentelemetry with tracing instrumentations off', () => {
  it('only propagates: same trace id, a new parent span, not sampled', () => {
    const { ctx, recorded } = fakeContext({ headers: { traceparent: `00-${TRACE}-${INCOMING_SPAN}-01` } });
    openTelemetry.access!(ctx, config({ http_response_header_for_traceid: 'x-trace-id' }));
    const traceparent = String(recorded.headers.get('traceparent'));
    expect(traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    expect(traceparent).not.toContain(INCOMING_SPAN);
    expect(ctx.logValues!.get('trace_id')).toEqual({ w3c: TRACE });
    expect(recorded.response.get('x-trace-id')).toBe(TRACE);
  });

  it('starts a trace when none came, in the default format (w3c) and per propagation', () => {
    const { ctx, recorded } = fakeContext();
    openTelemetry.access!(ctx, config({ propagation: { extract: ['b3'], inject: ['preserve', 'datadog'], default_format: 'jaeger' } }));
    expect(String(recorded.headers.get('uber-trace-id'))).toMatch(/^[0-9a-f]{32}:[0-9a-f]{16}:0:00$/);
    expect(recorded.headers.get('x-datadog-sampling-priority')).toBe('0');
  });
});

describe('opentelemetry with tracing instrumentations on', () => {
  let collector: OtlpCollector;
  beforeAll(async () => {
    collector = await startOtlpCollector();
  });
  afterAll(async () => {
    await closeOpenTelemetryExporters();
    await collector.close();
  });

  function tracedContext(headers: Record<string, string>, rate = 1): { ctx: PluginContext; spans: RequestSpans; recorded: ReturnType<typeof fakeContext>['recorded'] } {
    const tracing = { instrumentations: parseTracingInstrumentations('all'), samplingRate: rate };
    const { ctx, recorded } = fakeContext({ headers, runtime: { tracing } });
    const spans = new RequestSpans(tracing.instrumentations, Date.now(), { 'http.method': 'GET' });
    return { ctx: { ...ctx, spans }, spans, recorded };
  }

  it('injects the balancer span as parent and exports the request spans over OTLP', async () => {
    const { ctx, spans, recorded } = tracedContext({ traceparent: `00-${TRACE}-${INCOMING_SPAN}-01` });
    const conf = config({ traces_endpoint: collector.url, resource_attributes: { 'service.name': 'edge' } });
    spans.endWhen(spans.start('kong.router'));
    openTelemetry.access!(ctx, conf);
    expect(recorded.headers.get('traceparent')).toBe(`00-${TRACE}-${spans.balancerSpanId}-01`);
    spans.start('kong.balancer', SpanKind.CLIENT, { try_count: 1 }, spans.balancerSpanId!);
    void openTelemetry.log!(ctx, conf, fakeSummary({ status: 201 }));
    const root = await until(() => collector.spans.find((s) => s.traceId === TRACE && s.name === 'kong'), 'the request span');
    expect(root).toMatchObject({ parentSpanId: INCOMING_SPAN, kind: 2, scope: 'kong-internal', attributes: { 'http.status_code': 201, 'http.route': '', 'http.method': 'GET' } });
    expect(root.resource['service.name']).toBe('edge');
    // nanosecond timestamps, exact to the recorded microsecond
    expect(Number(root.startNs / 1000n)).toBe(Math.round(spans.root.startMs * 1000));
    expect(root.endNs).toBeGreaterThanOrEqual(root.startNs);
    await until(() => (collector.spans.filter((s) => s.traceId === TRACE).length === 3 ? true : undefined), 'three spans');
    const balancer = collector.spans.find((s) => s.name === 'kong.balancer')!;
    expect(balancer).toMatchObject({ spanId: spans.balancerSpanId, parentSpanId: root.spanId, kind: 3 });
    expect(collector.requests[0]!['content-type']).toBe('application/x-protobuf');
  });

  it('exports nothing for a trace the caller did not sample, and follows the plugin sampling_rate', async () => {
    const unsampled = '1'.repeat(32);
    const first = tracedContext({ traceparent: `00-${unsampled}-${INCOMING_SPAN}-00` });
    const conf = config({ traces_endpoint: collector.url, sampling_rate: 1 });
    openTelemetry.access!(first.ctx, conf);
    void openTelemetry.log!(first.ctx, conf, fakeSummary());
    const sampled = '2'.repeat(32);
    const second = tracedContext({ traceparent: `00-${sampled}-${INCOMING_SPAN}-01` }, 0);
    openTelemetry.access!(second.ctx, conf);
    void openTelemetry.log!(second.ctx, conf, fakeSummary());
    await until(() => collector.spans.find((s) => s.traceId === sampled), 'the sampled trace');
    expect(collector.spans.filter((s) => s.traceId === unsampled)).toEqual([]);
  });
});
