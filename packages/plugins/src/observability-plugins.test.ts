import { describe, expect, it } from '@jest/globals';
import { findPlugin } from './bundled';

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

  it('file-log: path required and checked; custom_fields_by_lua refused unless empty', () => {
    const p = findPlugin('file-log')!;
    expect(p.priority).toBe(9);
    expect(p.configSchema.parse({ path: '/tmp/x.log' })).toEqual({ path: '/tmp/x.log', reopen: false, custom_fields_by_lua: null });
    expect(p.configSchema.safeParse({}).success).toBe(false);
    const bad = p.configSchema.safeParse({ path: '/tmp/*.log' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toBe('not a valid filename');
    expect(p.configSchema.safeParse({ path: '/tmp/x', custom_fields_by_lua: {} }).success).toBe(true);
    const lua = p.configSchema.safeParse({ path: '/tmp/x', custom_fields_by_lua: { f: 'return 1' } });
    expect(lua.error?.issues[0]?.message).toBe('custom_fields_by_lua is not supported by gatehouse (no Lua runtime)');
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
