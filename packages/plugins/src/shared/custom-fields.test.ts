import { describe, expect, it } from '@jest/globals';
import type { ExchangeSummary } from '../contract';
import { customFieldValues } from './custom-fields';
import { fakeContext } from '../../test/support/fake-context';
import { serializeExchange } from './log-serializer';

const summary: ExchangeSummary = {
  requestId: 'r1', startedAt: 1_700_000_000_000, clientIp: '127.0.0.1', method: 'GET', url: 'http://x/p', path: '/p', rawQuery: '',
  requestHeaders: { host: 'x' }, requestSize: 10, status: 200, responseHeaders: {}, responseSize: 5, source: 'service',
  latencies: { kong: 1, proxy: 2, request: 3 }, route: null, service: null, consumer: null, credential: null, upstreamUri: '/p',
  upstreamTarget: null, completed: true,
};

describe('custom_fields_by_lua', () => {
  it('sets the value a chunk returns, reaches into the entry by dotted name, and removes a field for nil', () => {
    const { ctx } = fakeContext({ headers: { 'x-team': 'blue' } });
    const custom = customFieldValues(ctx, { team: 'return kong.request.get_header("x-team")', 'request.flag': 'return 1 + 1', client_ip: 'return nil', status: 'return kong.response.get_status()' }, summary, 'file-log');
    const entry = serializeExchange(summary, custom);
    expect(entry.team).toBe('blue');
    expect((entry.request as Record<string, unknown>).flag).toBe(2);
    expect(entry.status).toBe(200);
    expect('client_ip' in entry).toBe(false);
  });
});
