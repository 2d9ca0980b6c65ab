import { describe, expect, it } from '@jest/globals';
import { parseTracingInstrumentations, RequestSpans } from '@gatehouse/plugins';
import { traceDnsQuery, tracesDnsQuery } from './dns-spans';

const spansFor = (instrumentations: string) => new RequestSpans(parseTracingInstrumentations(instrumentations), Date.now(), {});

describe('kong.dns spans (dns_query)', () => {
  it('are recorded for host names only, when dns_query is on', () => {
    const on = spansFor('dns_query');
    expect(tracesDnsQuery(on, 'upstream.test')).toBe(true);
    expect([tracesDnsQuery(on, '10.0.0.1'), tracesDnsQuery(on, '::1'), tracesDnsQuery(on, '[::1]')]).toEqual([false, false, false]);
    expect([tracesDnsQuery(spansFor('request,balancer'), 'upstream.test'), tracesDnsQuery(null, 'upstream.test')]).toEqual([false, false]);
  });

  it('look a name up once, then answer from memory at once, as Kong reads its DNS cache', async () => {
    const host = 'localhost';
    const first = spansFor('dns_query');
    let deferred = false;
    await new Promise<void>((resolve) => {
      deferred = traceDnsQuery(first, host, 8080, resolve);
      if (!deferred) resolve();
    });
    const looked = first.spans[1]!;
    expect(looked).toMatchObject({ name: 'kong.dns', parentId: first.root.spanId, status: 0 });
    expect(looked.attributes).toEqual({ 'dns.record.domain': host, 'dns.record.port': 8080, 'dns.record.ip': expect.stringMatching(/^(127\.0\.0\.1|::1)$/) });
    const again = spansFor('dns_query');
    expect(traceDnsQuery(again, host, 8080, () => {})).toBe(false);
    const remembered = again.spans[1]!;
    expect(remembered.attributes['dns.record.ip']).toBe(looked.attributes['dns.record.ip']);
    expect(remembered.endMs).toBe(remembered.startMs);
  });

  it('mark a lookup that failed with error status and no address', async () => {
    const spans = spansFor('dns_query');
    await new Promise<void>((resolve) => expect(traceDnsQuery(spans, 'a..b', 80, resolve)).toBe(true));
    expect(spans.spans[1]).toMatchObject({ name: 'kong.dns', status: 2, attributes: { 'dns.record.domain': 'a..b', 'dns.record.port': 80 } });
    expect(spans.spans[1]!.endMs).not.toBeNull();
  });
});
