import { effectivePropagation, extractContext, injectContext, propagationInForce, propagationSchema, type PropagationConfig } from './propagation';
import type { HeaderBag } from './context';
import { parseTracingInstrumentations } from './request-spans';
import { sampledByTraceId } from './sampler';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const PARENT = '00f067aa0ba902b7';
const ALL: PropagationConfig = { extract: ['w3c', 'b3', 'jaeger', 'ot', 'aws', 'gcp', 'datadog'], clear: null, inject: ['preserve'], default_format: 'w3c' };

function written(conf: PropagationConfig, headers: HeaderBag, ctx = extractContext(conf, headers).ctx) {
  const extracted = extractContext(conf, headers);
  const out = new Map<string, string | null>();
  const errors: string[] = [];
  const ids = injectContext(conf, extracted, ctx, { setHeader: (n, v) => void out.set(n, v), removeHeader: (n) => void out.set(n, null) }, (e) => errors.push(e));
  return { headers: Object.fromEntries(out), ids, errors, extracted };
}

describe('extraction (Kong 3.9 extractors)', () => {
  it('reads W3C traceparent, refusing other versions and zero ids', () => {
    expect(extractContext(ALL, { traceparent: `00-${TRACE}-${SPAN}-01` })).toEqual({ format: 'w3c', ctx: { traceId: TRACE, spanId: SPAN, shouldSample: true, w3cFlags: 1, traceIdOriginalBytes: 16 } });
    expect(extractContext(ALL, { traceparent: `01-${TRACE}-${SPAN}-01` }).format).toBeNull();
    expect(extractContext(ALL, { traceparent: `00-${'0'.repeat(32)}-${SPAN}-01` }).format).toBeNull();
  });

  it('reads b3 multi and single headers; an 8-byte trace id is padded but remembered', () => {
    const multi = extractContext(ALL, { 'x-b3-traceid': SPAN, 'x-b3-spanid': PARENT, 'x-b3-sampled': '1' });
    expect(multi.format).toBe('b3');
    expect(multi.ctx).toMatchObject({ traceId: `${'0'.repeat(16)}${SPAN}`, spanId: PARENT, shouldSample: true, reuseSpanId: true, traceIdOriginalBytes: 8 });
    const single = extractContext(ALL, { b3: `${TRACE}-${SPAN}-d-${PARENT}` });
    expect(single.ctx).toMatchObject({ traceId: TRACE, spanId: SPAN, parentId: PARENT, shouldSample: true, flags: '1', singleHeader: true });
    expect(extractContext(ALL, { b3: '0' }).ctx).toMatchObject({ shouldSample: false });
  });

  it('reads jaeger, ot, aws, gcp and datadog', () => {
    expect(extractContext(ALL, { 'uber-trace-id': `${TRACE}:${SPAN}:0:1`, 'uberctx-user': 'a%20b' }).ctx).toMatchObject({ traceId: TRACE, spanId: SPAN, shouldSample: true, baggage: { user: 'a b' } });
    expect(extractContext(ALL, { 'ot-tracer-traceid': TRACE, 'ot-tracer-spanid': SPAN, 'ot-tracer-sampled': '0' }).ctx).toMatchObject({ traceId: TRACE, spanId: SPAN, shouldSample: false });
    expect(extractContext(ALL, { 'x-amzn-trace-id': `Root=1-${TRACE.slice(0, 8)}-${TRACE.slice(8)};Parent=${SPAN};Sampled=1` }).ctx).toMatchObject({ traceId: TRACE, spanId: SPAN, shouldSample: true });
    expect(extractContext(ALL, { 'x-cloud-trace-context': `${TRACE}/12345;o=1` }).ctx).toMatchObject({ traceId: TRACE, spanId: '0000000000003039', shouldSample: true });
    expect(extractContext(ALL, { 'x-datadog-trace-id': '1234', 'x-datadog-parent-id': '5678', 'x-datadog-sampling-priority': '2' }).ctx).toMatchObject({
      traceId: '4d2'.padStart(32, '0'),
      spanId: '162e'.padStart(16, '0'),
      shouldSample: true,
    });
  });

  it('takes the first format of `extract` that matches, and nothing when extract is empty', () => {
    const both = { traceparent: `00-${TRACE}-${SPAN}-01`, 'x-b3-traceid': TRACE, 'x-b3-spanid': PARENT };
    expect(extractContext({ ...ALL, extract: ['b3', 'w3c'] }, both).format).toBe('b3');
    expect(extractContext({ ...ALL, extract: null }, both)).toEqual({ ctx: {}, format: null });
  });
});

describe('injection (Kong 3.9 injectors)', () => {
  const ctx = { traceId: TRACE, spanId: SPAN, parentId: PARENT, shouldSample: true };
  const inject = (formats: NonNullable<PropagationConfig['inject']>) => written({ ...ALL, extract: null, inject: formats }, {}, ctx);

  it('writes each format', () => {
    expect(inject(['w3c']).headers).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01` });
    expect(inject(['b3']).headers).toEqual({ 'x-b3-traceid': TRACE, 'x-b3-spanid': SPAN, 'x-b3-parentspanid': PARENT, 'x-b3-sampled': '1' });
    expect(inject(['b3-single']).headers).toEqual({ b3: `${TRACE}-${SPAN}-1-${PARENT}` });
    expect(inject(['jaeger']).headers).toEqual({ 'uber-trace-id': `${TRACE}:${SPAN}:${PARENT}:01` });
    // ot carries 8-byte trace ids unless the incoming one had 16 bytes
    expect(inject(['ot']).headers).toEqual({ 'ot-tracer-traceid': TRACE.slice(16), 'ot-tracer-spanid': SPAN, 'ot-tracer-sampled': '1' });
    expect(written({ ...ALL, extract: null, inject: ['ot'] }, {}, { ...ctx, traceIdOriginalBytes: 16 }).headers['ot-tracer-traceid']).toBe(TRACE);
    expect(inject(['aws']).headers).toEqual({ 'x-amzn-trace-id': `Root=1-${TRACE.slice(0, 8)}-${TRACE.slice(8)};Parent=${SPAN};Sampled=1` });
    expect(inject(['gcp']).headers).toEqual({ 'x-cloud-trace-context': `${TRACE}/${BigInt(`0x${SPAN}`)};o=1` });
    expect(inject(['datadog']).headers).toEqual({
      'x-datadog-trace-id': BigInt(`0x${TRACE.slice(16)}`).toString(),
      'x-datadog-parent-id': BigInt(`0x${SPAN}`).toString(),
      'x-datadog-sampling-priority': '1',
    });
    expect(inject(['w3c', 'b3']).ids).toEqual({ w3c: TRACE, b3: TRACE });
  });

  it('preserve writes the format that was read (b3 single as b3-single), else default_format; clear removes headers', () => {
    expect(written({ ...ALL, inject: ['preserve'] }, { b3: `${TRACE}-${SPAN}-1` }).headers).toEqual({ b3: `${TRACE}-${SPAN}-1` });
    expect(written({ ...ALL, inject: ['preserve'], default_format: 'jaeger' }, {}, ctx).headers).toEqual({ 'uber-trace-id': `${TRACE}:${SPAN}:${PARENT}:01` });
    expect(written({ ...ALL, clear: ['x-request-trace'], inject: null }, {}).headers).toEqual({ 'x-request-trace': null });
  });

  it('reports a context that lacks what a format needs', () => {
    expect(written({ ...ALL, extract: null, inject: ['w3c'] }, {}, {}).errors).toEqual(['w3c injector context is invalid: field trace_id not found in context']);
  });
});

describe('configuration', () => {
  it('the propagation record defaults to the plugin default format only', () => {
    expect(propagationSchema('b3').parse(undefined)).toEqual({ extract: null, clear: null, inject: null, default_format: 'b3' });
    expect(propagationSchema('w3c').safeParse({ extract: ['b3-single'], default_format: 'w3c' }).success).toBe(false);
  });

  it("maps the deprecated header_type as Kong's get_plugin_params", () => {
    const base = propagationSchema('w3c').parse(undefined);
    expect(effectivePropagation(base, { header_type: 'preserve' })).toMatchObject({ extract: ['b3', 'w3c', 'jaeger', 'ot', 'datadog', 'aws', 'gcp'], inject: ['preserve'] });
    expect(effectivePropagation(base, { header_type: 'ignore', default_header_type: 'b3' })).toMatchObject({ extract: null, inject: ['b3'] });
    expect(effectivePropagation(base, { header_type: 'jaeger' })).toMatchObject({ inject: ['preserve', 'jaeger'] });
    const set = { ...base, inject: ['gcp' as const] };
    expect(effectivePropagation(set, { header_type: 'preserve' })).toBe(set);
  });

  it('works out the settings in force once per configuration object, the same as effectivePropagation', () => {
    const propagation = propagationSchema('b3').parse(undefined);
    const config = { propagation, header_type: 'ignore', default_header_type: 'jaeger' };
    const inForce = propagationInForce(config);
    expect(inForce).toEqual(effectivePropagation(propagation, config));
    expect(inForce).toMatchObject({ extract: null, inject: ['jaeger'] });
    expect(propagationInForce(config)).toBe(inForce);
    // another configuration (the next snapshot's) gets its own
    const next = { ...config, header_type: 'w3c' };
    expect(propagationInForce(next)).toMatchObject({ inject: ['preserve', 'w3c'], default_format: 'jaeger' });
  });

  it('reads tracing_instrumentations with Kong messages', () => {
    expect([...parseTracingInstrumentations('off')]).toEqual([]);
    expect(parseTracingInstrumentations('all').has('balancer')).toBe(true);
    expect([...parseTracingInstrumentations('router, balancer')].sort()).toEqual(['balancer', 'request', 'router']);
    expect(() => parseTracingInstrumentations('router,off')).toThrow('invalid tracing types: off, other types are mutually exclusive');
    expect(() => parseTracingInstrumentations('everything')).toThrow('invalid tracing type: everything');
  });

  it('samples by trace id: the same id always gets the same answer', () => {
    expect(sampledByTraceId(TRACE, 1)).toBe(true);
    expect(sampledByTraceId(TRACE, 0)).toBe(false);
    expect(sampledByTraceId('00'.repeat(16), 0.01)).toBe(true);
    expect(sampledByTraceId('ff'.repeat(16), 0.99)).toBe(false);
  });
});
