import { describe, expect, it } from '@jest/globals';
import type { ExchangeSummary } from '@gatehouse/plugins';
import { accessLogLine, isoTime } from './access-log';

const base: ExchangeSummary = {
  requestId: '0123456789abcdef0123456789abcdef',
  startedAt: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  clientIp: '::1',
  method: 'GET',
  url: 'http://h/p',
  path: '/p"a\\th\u0001',
  rawQuery: 'a=1&b="2"',
  requestHeaders: {},
  requestSize: 120,
  status: 201,
  responseHeaders: {},
  responseSize: 340,
  source: 'service',
  latencies: { kong: 1, proxy: 2, request: 3 },
  route: { id: 'r-id', name: null } as never,
  service: { id: 's-id', name: 'svc' } as never,
  consumer: { id: 'c-id', username: 'ann' } as never,
  credential: null,
  upstreamUri: '/p',
  upstreamTarget: { host: '::1', port: 8080 },
  completed: true,
};

describe('access log line', () => {
  it('is the JSON of the exchange, escaping what needs it', () => {
    expect(JSON.parse(accessLogLine(base))).toEqual({
      time: '2026-01-02T03:04:05.678Z',
      request_id: base.requestId,
      client_ip: '::1',
      method: 'GET',
      path: '/p"a\\th\u0001',
      query: 'a=1&b="2"',
      status: 201,
      route: 'r-id',
      service: 'svc',
      consumer: 'ann',
      upstream: '[::1]:8080',
      upstream_uri: '/p',
      source: 'service',
      latencies: { kong: 1, proxy: 2, request: 3 },
      bytes: { request: 120, response: 340 },
      completed: true,
    });
  });

  it('escapes everything outside ASCII, lone surrogates included, so every line is ASCII and valid JSON', () => {
    const line = accessLogLine({ ...base, path: '/café/🙂', rawQuery: 'q=\ud800\u007f', consumer: { id: 'c-id-2', username: 'zoë' } as never });
    expect(line).toContain('"path":"/caf\\u00e9/\\ud83d\\ude42"');
    expect(line).toContain('"query":"q=\\ud800\u007f"');
    expect(line).toContain('"consumer":"zo\\u00eb"');
    expect(/^[\x20-\x7f]*$/.test(line)).toBe(true);
    expect(JSON.parse(line)).toMatchObject({ path: '/café/🙂', query: 'q=\ud800\u007f', consumer: 'zoë' });
  });

  it('writes null for what a gateway answer does not have', () => {
    const line = JSON.parse(accessLogLine({ ...base, route: null, service: null, consumer: null, upstreamTarget: null, upstreamUri: null, source: 'kong', latencies: { kong: 4, proxy: -1, request: 4 }, completed: false }));
    expect(line).toMatchObject({ route: null, service: null, consumer: null, upstream: null, upstream_uri: null, source: 'kong', latencies: { kong: 4, proxy: -1, request: 4 }, completed: false });
  });

  it('labels each line with its own consumer, service and upstream, whatever the line before it on the same route', () => {
    const route = { id: 'r-id', name: 'shared' } as never;
    const bob = { id: 'b-id', username: 'bob' } as never;
    const other = { id: 'o-id', name: 'other' } as never;
    const lines = [
      base,
      { ...base, route },
      { ...base, route, consumer: bob },
      { ...base, route, consumer: null },
      { ...base, route, service: other },
      { ...base, route, upstreamTarget: { host: '10.0.0.2', port: 8080 } },
      { ...base, route, upstreamTarget: { host: '10.0.0.2', port: 8081 } },
      { ...base, route, upstreamTarget: null, upstreamUri: null },
      { ...base, route },
      { ...base, route: null, service: null, consumer: null, upstreamTarget: null },
      { ...base, route: null, service: null, consumer: bob, upstreamTarget: null },
    ].map((s) => JSON.parse(accessLogLine(s)));
    expect(lines.map((l) => [l.route, l.service, l.consumer, l.upstream])).toEqual([
      ['r-id', 'svc', 'ann', '[::1]:8080'],
      ['shared', 'svc', 'ann', '[::1]:8080'],
      ['shared', 'svc', 'bob', '[::1]:8080'],
      ['shared', 'svc', null, '[::1]:8080'],
      ['shared', 'other', 'ann', '[::1]:8080'],
      ['shared', 'svc', 'ann', '10.0.0.2:8080'],
      ['shared', 'svc', 'ann', '10.0.0.2:8081'],
      ['shared', 'svc', 'ann', null],
      ['shared', 'svc', 'ann', '[::1]:8080'],
      [null, null, null, null],
      [null, null, 'bob', null],
    ]);
  });

  it('is byte for byte the JSON.stringify of its fields in order, with everything outside ASCII escaped, for any text, time and number', () => {
    const asciiEscaped = (json: string) => json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const texts = ['', '/a', 'é', '🙂', '\ud800', '"', '\\', '\u0001', '\u007f', '\u2028'];
    const numbers = [0, -0, 7, 10, 999, -1, 2147483648, 0.5, 1e21];
    const times = [Date.UTC(2026, 0, 2, 3, 4, 5, 6), Date.UTC(2026, 0, 2, 3, 4, 5, 60), Date.UTC(2026, 0, 2, 3, 4, 5, 600), Date.UTC(2026, 0, 2, 3, 4, 5, 600) + 0.25];
    for (let i = 0; i < 200; i++) {
      const text = texts[i % texts.length]!;
      const n = numbers[i % numbers.length]!;
      const s: ExchangeSummary = { ...base, startedAt: times[i % times.length]!, path: `/p${text}`, rawQuery: text, upstreamUri: i % 3 === 0 ? null : text, status: n, latencies: { kong: n, proxy: -1, request: n }, responseSize: n, source: i % 2 === 0 ? 'kong' : 'service', completed: i % 2 === 0 };
      const l = s.latencies;
      const expected = asciiEscaped(JSON.stringify({
        time: isoTime(s.startedAt),
        request_id: s.requestId,
        client_ip: s.clientIp,
        method: s.method,
        path: s.path,
        query: s.rawQuery,
        status: s.status,
        route: 'r-id',
        service: 'svc',
        consumer: 'ann',
        upstream: '[::1]:8080',
        upstream_uri: s.upstreamUri,
        source: s.source,
        latencies: { kong: l.kong, proxy: l.proxy, request: l.request },
        bytes: { request: s.requestSize, response: s.responseSize },
        completed: s.completed,
      }));
      expect(accessLogLine(s)).toBe(expected);
    }
  });

  it('formats times as toISOString does, across seconds, days and years', () => {
    const times = [Date.UTC(2026, 0, 2, 3, 4, 5, 0), Date.UTC(2026, 0, 2, 3, 4, 5, 7), Date.UTC(2026, 0, 2, 3, 4, 5, 42), Date.UTC(2026, 0, 2, 3, 4, 5, 999), Date.UTC(2026, 0, 2, 3, 4, 6, 1), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1, 0, 0, 0, 0), 0];
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
