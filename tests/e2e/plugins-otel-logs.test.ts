// opentelemetry's `logs_endpoint` as Kong 3.9's spec exercises it (spec/03-plugins/37-opentelemetry/04-exporter_spec
// "exports valid logs with/without tracing"): a post-function snippet writes with kong.log and ngx.log, and the lines
// reach a local OTLP/HTTP collector (decoding with the OpenTelemetry project's protobuf classes) as log records with
// Kong's attributes, with the request's trace when the plugin also traces; in both topologies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, startOtlpCollector, type CollectedLog, type EchoUpstream, type OtlpCollector } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { createdThrough, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
const QUEUE = { max_batch_size: 1000, max_coalescing_delay: 0.05 };
const SNIPPET = 'kong.log.info("this is a log from kong.log")\nngx.log(ngx.INFO, "this is a log from ngx.log")\nkong.log.debug("below the log level")';

describe.each(TOPOLOGIES)('opentelemetry logs (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let collector: OtlpCollector;

  async function routeWith(label: string, plugins: unknown[]): Promise<void> {
    await createdThrough(topology.adminUrl, '/services', { name: label, url: upstream.url });
    await createdThrough(topology.adminUrl, `/services/${label}/routes`, { name: `${label}-route`, paths: [`/${label}`] });
    for (const plugin of plugins) await createdThrough(topology.adminUrl, `/services/${label}/plugins`, plugin);
  }

  async function logsOf(requestId: string): Promise<CollectedLog[]> {
    const mine = () => collector.logs.filter((l) => l.attributes['request.id'] === requestId);
    await waitUntil(`two log records of request ${requestId}`, () => mine().length >= 2);
    return mine();
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    collector = await startOtlpCollector();
    // the data planes log at `info`, as Kong's spec runs at a verbose level: lines below it are not exported
    topology = await startTopology(name, { dataPlaneEnv: { GATEHOUSE_TRACING_INSTRUMENTATIONS: 'all', GATEHOUSE_TRACING_SAMPLING_RATE: '1', GATEHOUSE_LOG_LEVEL: 'info' } });
    const postFunction = { name: 'post-function', config: { access: [SNIPPET] } };
    await routeWith('traces_logs', [{ name: 'opentelemetry', config: { traces_endpoint: collector.url, logs_endpoint: collector.logsUrl, queue: QUEUE } }, postFunction]);
    await routeWith('logs', [{ name: 'opentelemetry', config: { logs_endpoint: collector.logsUrl, queue: QUEUE, resource_attributes: { 'deployment.environment': 'e2e' } } }, postFunction]);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      () => collector?.close(),
    );
  });

  function expectKongLogs(logs: CollectedLog[]): void {
    const byBody = new Map(logs.map((l) => [l.body, l]));
    expect([...byBody.keys()].sort()).toEqual(['this is a log from kong.log', 'this is a log from ngx.log']);
    for (const [body, line] of [['this is a log from kong.log', 1], ['this is a log from ngx.log', 2]] as const) {
      const log = byBody.get(body)!;
      expect(log).toMatchObject({ severityNumber: 9, severityText: 'INFO', scope: 'kong-internal' });
      expect(log.attributes).toMatchObject({ 'introspection.source': SNIPPET, 'introspection.current.line': line, 'introspection.what': 'main' });
      expect(log.timeNs > 0n && log.observedNs === log.timeNs).toBe(true);
      expect(log.resource).toMatchObject({ 'service.name': 'kong', 'service.version': '3.9.0', 'service.instance.id': expect.any(String) });
    }
  }

  it('exports the lines a snippet wrote, with the request id and the trace, span and flags of the traced request', async () => {
    for (const dp of topology.dataPlanes) {
      const traceId = hex(32);
      const res = await proxied(`${dp.proxyUrl}/traces_logs`, { headers: { traceparent: `00-${traceId}-0123456789abcdef-01` } });
      expect(res.status).toBe(200);
      const logs = await logsOf(res.headers.get('x-kong-request-id')!);
      expectKongLogs(logs);
      await waitUntil('the post-function span', () => collector.spans.some((s) => s.traceId === traceId && s.name === 'kong.access.plugin.post-function'));
      const span = collector.spans.find((s) => s.traceId === traceId && s.name === 'kong.access.plugin.post-function')!;
      for (const log of logs) expect(log).toMatchObject({ traceId, spanId: span.spanId, flags: 1 });
    }
  });

  it('exports them without a trace when the plugin only has logs_endpoint, under its resource attributes', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/logs`);
      expect(res.status).toBe(200);
      const logs = await logsOf(res.headers.get('x-kong-request-id')!);
      expectKongLogs(logs);
      for (const log of logs) {
        expect(log.traceId).toBe('');
        expect(log.resource['deployment.environment']).toBe('e2e');
      }
      // nothing below the node's log level (info): the debug line is not among what was sent
      expect(collector.logs.some((l) => l.body === 'below the log level')).toBe(false);
    }
  });
});
