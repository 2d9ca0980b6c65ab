import { checkWith } from '@gatehouse/core';
import { startLogCollector, type LogCollector } from '@gatehouse/testkit';
import { fakeContext, fakeSummary } from '../../test/support/fake-context';
import { closeZipkinExporters, zipkin } from './index';
import { zipkinConfigSchema } from './schema';
import { parseTagsHeader } from './span';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

describe('zipkin schema (Kong 3.9)', () => {
  it("has Kong's defaults", () => {
    expect(zipkinConfigSchema.parse({})).toMatchObject({
      local_service_name: 'kong',
      sample_ratio: 0.001,
      include_credential: true,
      traceid_byte_count: 16,
      header_type: 'preserve',
      default_header_type: 'b3',
      tags_header: 'Zipkin-Tags',
      http_span_name: 'method',
      connect_timeout: 2000,
      phase_duration_flavor: 'annotations',
      propagation: { default_format: 'b3' },
      queue: { max_batch_size: 1 },
    });
  });

  it('refuses protected and repeated static tags', () => {
    const protectedTag = zipkinConfigSchema.safeParse({ static_tags: [{ name: 'lc', value: 'x' }] });
    expect(protectedTag.error?.issues[0]?.message).toMatch(/^must not be one of: error, http.method/);
    const repeated = zipkinConfigSchema.safeParse({ static_tags: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }] });
    expect(repeated.error?.issues[0]?.message).toBe('repeated tags are not allowed: a');
    expect(zipkinConfigSchema.safeParse({ sample_ratio: 1.5 }).error?.issues[0]?.message).toBe('value should be between 0 and 1');
  });

  it("reports repeated tags where Kong does", () => {
    const input = { http_endpoint: 'http://example.dev', static_tags: [{ name: 'foo', value: 'bar' }, { name: 'foo', value: 'baz' }] };
    expect(checkWith(zipkinConfigSchema, input)).toEqual({ ok: false, fields: { static_tags: 'repeated tags are not allowed: foo' } });
  });

  it('parses the tags header', () => {
    expect(parseTagsHeader('foo=bar; team = edge ;bad')).toEqual({ tags: { foo: 'bar', team: 'edge' }, errors: ['bad'] });
  });
});

describe('zipkin spans', () => {
  let receiver: LogCollector;
  beforeAll(async () => {
    receiver = await startLogCollector();
  });
  afterAll(async () => {
    await closeZipkinExporters();
    await receiver.close();
  });

  it('reports request, proxy and balancer spans in Zipkin v2 JSON with the incoming b3 ids', async () => {
    const conf = zipkinConfigSchema.parse({ http_endpoint: receiver.url, sample_ratio: 0, static_tags: [{ name: 'env', value: 'test' }], default_service_name: 'unknown-svc' });
    const { ctx, recorded } = fakeContext({ headers: { 'x-b3-traceid': TRACE, 'x-b3-spanid': SPAN, 'x-b3-sampled': '1', 'zipkin-tags': 'team=edge', host: 'api.test' }, method: 'POST', path: '/orders' });
    zipkin.access!(ctx, conf);
    expect(recorded.headers.get('x-b3-traceid')).toBe(TRACE);
    expect(recorded.headers.get('x-b3-parentspanid')).toBe(SPAN);
    const proxySpanId = String(recorded.headers.get('x-b3-spanid'));
    void zipkin.log!(ctx, conf, fakeSummary({ status: 201 }));
    const deadline = Date.now() + 10_000;
    while (receiver.received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const spans = receiver.received.map((r) => (r.body as Array<Record<string, unknown>>)[0]!);
    const request = spans.find((s) => s.kind === 'SERVER')!;
    expect(request).toMatchObject({ traceId: TRACE, id: SPAN, name: 'POST', localEndpoint: { serviceName: 'kong' }, remoteEndpoint: { serviceName: 'unknown-svc' } });
    expect(request.tags).toMatchObject({ lc: 'kong', 'http.method': 'POST', 'http.path': '/orders', 'http.host': 'api.test', 'http.status_code': '201', env: 'test', team: 'edge' });
    const proxy = spans.find((s) => s.name === 'POST (proxy)')!;
    expect(proxy).toMatchObject({ id: proxySpanId, parentId: SPAN, kind: 'CLIENT' });
    expect((proxy.annotations as Array<{ value: string }>).map((a) => a.value)).toEqual(['kas', 'kaf', 'khs', 'khf', 'kbs', 'kbf']);
    expect(spans.find((s) => s.name === 'POST (balancer try 1)')).toMatchObject({ parentId: SPAN, tags: { 'kong.balancer.try': '1' }, remoteEndpoint: { ipv4: '127.0.0.1', port: 80 } });
  });
});
