import { startOtlpCollector, type OtlpCollector } from '@gatehouse/testkit';
import { fakeContext, fakeSummary } from '../../test/support/fake-context';
import { newExchange } from '../pdk/exchange';
import { luaSandbox } from '../pdk/lua/sandbox';
import { requestLogs } from '../shared/request-logs';
import { closeOpenTelemetryExporters, openTelemetry } from './index';
import { openTelemetryConfigSchema } from './schema';

const SNIPPET = 'kong.log.warn("first ", 1, " ", true)\nngx.log(ngx.ERR, "second")\nkong.log.debug("quiet")';
const logger = { error: () => undefined, warn: () => undefined };

describe('opentelemetry logs_endpoint', () => {
  let collector: OtlpCollector;
  beforeAll(async () => {
    collector = await startOtlpCollector();
  });
  afterAll(async () => {
    await closeOpenTelemetryExporters();
    await collector.close();
  });

  it("keeps a snippet's log lines at or above the node's level, with where they were written", () => {
    const { ctx } = fakeContext({ runtime: { logLevel: () => 'info' } });
    const sandbox = luaSandbox();
    sandbox.runSnippet(sandbox.compile(SNIPPET), newExchange(ctx, 'access', 'post-function', logger));
    expect(requestLogs(ctx).map((l) => [l.level, l.body, l.attributes])).toEqual([
      ['warn', 'first 1 true', { 'introspection.current.line': 1, 'introspection.namewhat': '', 'introspection.source': SNIPPET, 'introspection.what': 'main' }],
      ['err', 'second', { 'introspection.current.line': 2, 'introspection.namewhat': '', 'introspection.source': SNIPPET, 'introspection.what': 'main' }],
    ]);
  });

  it('sends them as OTLP log records with the request id and Kong’s severities', async () => {
    const { ctx } = fakeContext();
    const sandbox = luaSandbox();
    sandbox.runSnippet(sandbox.compile(SNIPPET), newExchange(ctx, 'access', 'post-function', logger));
    const config = openTelemetryConfigSchema.parse({ logs_endpoint: collector.logsUrl, queue: { max_coalescing_delay: 0.05 } });
    void openTelemetry.log!(ctx, config, fakeSummary({ requestId: 'req-1' }));
    const deadline = Date.now() + 10_000;
    while (collector.logs.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(collector.logs.map((l) => [l.body, l.severityNumber, l.severityText, l.attributes['request.id'], l.traceId])).toEqual([
      ['first 1 true', 13, 'WARN', 'req-1', ''],
      ['second', 17, 'ERR', 'req-1', ''],
      ['quiet', 5, 'DEBUG', 'req-1', ''],
    ]);
    expect(collector.logs[0]!.resource).toMatchObject({ 'service.name': 'kong', 'service.version': '3.9.0' });
  });
});
