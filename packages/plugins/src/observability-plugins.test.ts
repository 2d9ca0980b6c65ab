import { describe, expect, it } from '@jest/globals';
import { findPlugin } from './bundled';
import { trackerId } from './correlation-id/generators';
import { fakeContext } from '../test/support/fake-context';
import { serializeExchange } from './shared/log-serializer';
import type { ExchangeSummary } from './contract';

/** Kong's TRACKER_PATTERN (spec/03-plugins/11-correlation-id), as a regular expression */
const TRACKER_PATTERN = /^\d+\.\d+\.\d+\.\d+-\d+-\d+-\d+-\d+-\d{10}\.\d{3}$/;

describe('observability plugins: Kong 3.x names, priorities and defaults', () => {
  it('prometheus', () => {
    const p = findPlugin('prometheus')!;
    expect(p.priority).toBe(13);
    expect(p.configSchema.parse({})).toEqual({ per_consumer: false, status_code_metrics: false, latency_metrics: false, bandwidth_metrics: false, upstream_health_metrics: false, ai_metrics: false });
    expect(typeof p.log).toBe('function');
  });

  it('correlation-id', () => {
    const p = findPlugin('correlation-id')!;
    expect(p.priority).toBe(100001);
    expect(p.configSchema.parse({})).toEqual({ header_name: 'Kong-Request-ID', generator: 'uuid#counter', echo_downstream: false });
    expect(p.configSchema.safeParse({ generator: 'nope' }).success).toBe(false);
  });

  it('correlation-id: the tracker id is addr-port-pid-connection-requests-epoch.msec (Kong\'s TRACKER_PATTERN)', () => {
    const id = trackerId({ localAddress: '127.0.0.1', localPort: 8000, serial: 7, requests: 3 }, 1_764_000_000_123);
    expect(id).toBe(`127.0.0.1-8000-${process.pid}-7-3-1764000000.123`);
    expect(id).toMatch(TRACKER_PATTERN);
  });

  it('correlation-id: the id goes into the log entries as correlation_id (the log serializer contains the Correlation ID)', async () => {
    const p = findPlugin('correlation-id')!;
    const { ctx } = fakeContext({ headers: { 'kong-request-id': '1234' } });
    await p.access!(ctx, p.configSchema.parse({}));
    expect(ctx.logValues?.get('correlation_id')).toBe('1234');
    const summary = { requestId: 'r', path: '/', rawQuery: '', requestHeaders: {}, responseHeaders: {}, latencies: { kong: 0, proxy: 0, request: 0 }, credential: null, upstreamTarget: null, logValues: ctx.logValues } as unknown as ExchangeSummary;
    expect(serializeExchange(summary).correlation_id).toBe('1234');
  });

  it('file-log: path required and checked; custom_fields_by_lua parsed at creation', () => {
    const p = findPlugin('file-log')!;
    expect(p.priority).toBe(9);
    expect(p.configSchema.parse({ path: '/tmp/x.log' })).toEqual({ path: '/tmp/x.log', reopen: false, custom_fields_by_lua: null });
    expect(p.configSchema.safeParse({}).success).toBe(false);
    const bad = p.configSchema.safeParse({ path: '/tmp/*.log' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toBe('not a valid filename');
    expect(p.configSchema.safeParse({ path: '/tmp/x', custom_fields_by_lua: {} }).success).toBe(true);
    expect(p.configSchema.safeParse({ path: '/tmp/x', custom_fields_by_lua: { f: 'return 1' } }).success).toBe(true);
    const lua = p.configSchema.safeParse({ path: '/tmp/x', custom_fields_by_lua: { f: 'return (' } });
    expect(lua.error?.issues[0]?.message).toBe(`Error parsing function: [string "return ("]:1: unexpected symbol near <eof>`);
  });

  it('http-log', () => {
    const p = findPlugin('http-log')!;
    expect(p.priority).toBe(12);
    const config = p.configSchema.parse({ http_endpoint: 'http://collector:9000/logs' });
    expect(config).toMatchObject({ method: 'POST', content_type: 'application/json', timeout: 10000, keepalive: 60000, headers: null, custom_fields_by_lua: null });
    expect(config.queue).toMatchObject({ max_batch_size: 1, max_coalescing_delay: 1, max_entries: 10000, max_retry_time: 60 });
    expect(p.configSchema.safeParse({}).success).toBe(false);
    expect(p.configSchema.safeParse({ http_endpoint: 'ftp://x/y' }).success).toBe(false);
    expect(p.configSchema.safeParse({ http_endpoint: 'http://x', method: 'GET' }).success).toBe(false);
    expect(p.configSchema.safeParse({ http_endpoint: 'http://x', headers: { 'Content-Type': 'text/plain' } }).success).toBe(false);
    expect(p.configSchema.parse({ http_endpoint: 'http://x', queue: { max_batch_size: 10 } }).queue).toMatchObject({ max_batch_size: 10, max_coalescing_delay: 1 });
  });
});
