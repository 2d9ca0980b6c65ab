import { NO_ATTRIBUTES, RequestSpans, SpanKind, parseTracingInstrumentations, type RecordedSpan } from '../shared/tracing/request-spans';
import { unixNanos, writeHex } from './fields';
import { SpanEncoder } from './otlp';
import { TraceEncoder } from './trace-batch';
import { anyValue, otlp, resourceBytes } from './proto';

/** a span with its request's trace id */
interface ExportSpan {
  traceId: string;
  span: RecordedSpan;
  /** the request's spans, whose drawn trace id the encoder copies as bytes when it is still the trace id */
  drawn?: RequestSpans;
}

/** what the generated class makes of the same spans given as plain objects: the reference the encoder must match */
function reference(batch: ExportSpan[], resource: Record<string, string>): Uint8Array {
  const nanos = (ms: number) => {
    const seconds = Math.floor(ms / 1000);
    const ns = BigInt(seconds) * 1_000_000_000n + BigInt(Math.round((ms - seconds * 1000) * 1e6));
    return { low: Number(ns & 0xffffffffn), high: Number(ns >> 32n), unsigned: true };
  };
  const keyValues = (attributes: Record<string, string | number | boolean>) => Object.keys(attributes).map((key) => ({ key, value: anyValue(key, attributes[key]!) }));
  const span = ({ traceId, span: s }: { traceId: string; span: RecordedSpan }) => ({
    traceId: Buffer.from(traceId, 'hex'),
    spanId: Buffer.from(s.spanId, 'hex'),
    ...(s.parentId !== null ? { parentSpanId: Buffer.from(s.parentId, 'hex') } : {}),
    name: s.name,
    kind: s.kind + 1,
    startTimeUnixNano: nanos(s.startMs),
    endTimeUnixNano: nanos(s.endMs ?? s.startMs),
    attributes: keyValues(s.attributes),
    status: { code: s.status },
  });
  return otlp.ExportTraceServiceRequest.encode({
    resourceSpans: [{ resource: { attributes: keyValues(resource) }, scopeSpans: [{ scope: { name: 'kong-internal', version: '0.1.0' }, spans: batch.map(span) }] }],
  }).finish();
}

function requestSpans(i: number): ExportSpan[] {
  const spans = new RequestSpans(parseTracingInstrumentations('all'), 1_764_000_000_000.123 + i * 7.654321, { 'http.method': 'GET', 'http.url': `http://example.dev/${i}`, 'kong.request.id': `req-${i}` });
  spans.traceId = i % 2 === 0 ? spans.traceId : '0af7651916cd43dd8448eb211c80319c';
  spans.root.parentId = i % 3 === 0 ? null : 'b7ad6b7169203331';
  spans.endWhen(spans.start('kong.router'));
  spans.start('kong.balancer', SpanKind.CLIENT, { try_count: 1, 'net.peer.port': 8080, 'net.peer.name': 'up' }, spans.balancerSpanId!);
  spans.root.attributes['http.status_code'] = 200 + (i % 3);
  spans.root.attributes['kong.cached'] = i % 2 === 0;
  spans.root.status = i % 4 === 0 ? 2 : 0;
  spans.finishOpen(spans.root.startMs + 1.5);
  return spans.spans.map((span) => ({ traceId: spans.traceId, span, drawn: spans }));
}

describe('OTLP trace encoding', () => {
  it('writes the bytes the generated ExportTraceServiceRequest class writes for the same spans, batch after batch', () => {
    const attributes = { 'service.name': 'edge', 'service.version': '3.9.0', 'deployment.environment': 'test' };
    const spanEncoder = new SpanEncoder();
    const encoder = new TraceEncoder(resourceBytes(attributes));
    // enough requests for the attribute cache to fill up for the per-request values
    for (let round = 0; round < 3; round++) {
      const requests = Array.from({ length: 120 }, (_, i) => requestSpans(round * 120 + i));
      // as the plugin does: each request's spans encoded when it ends, one entry a request, a batch framed from the queued entries
      const chunks = requests.map((spans) => spanEncoder.encode(spans[0]!.traceId, spans.map((s) => s.span), spans[0]!.drawn));
      expect(chunks).toHaveLength(requests.length);
      expect(Buffer.from(encoder.encode(chunks)).equals(Buffer.from(reference(requests.flat(), attributes)))).toBe(true);
    }
  });

  it('reuses the memory of a batch given back for the next one, with the same bytes as new memory', () => {
    const spanEncoder = new SpanEncoder();
    const encoder = new TraceEncoder(resourceBytes({ 'service.name': 'kong' }));
    const requests = Array.from({ length: 80 }, (_, i) => requestSpans(i));
    const chunks = requests.map((spans) => spanEncoder.encode(spans[0]!.traceId, spans.map((s) => s.span), spans[0]!.drawn));
    const first = encoder.encode(chunks);
    const expected = Buffer.from(first);
    encoder.release(first);
    const again = encoder.encode(chunks.slice(0, 10));
    expect(again.buffer).toBe(first.buffer);
    encoder.release(again);
    const third = encoder.encode(chunks);
    expect(third.buffer).toBe(first.buffer);
    expect(third.equals(expected)).toBe(true);
  });

  it('encodes non-ASCII names and attribute values, values past the attribute cache and values of tens of KiB, as the generated class does', () => {
    const spanEncoder = new SpanEncoder();
    const encoder = new TraceEncoder(resourceBytes({ 'service.name': 'kong' }));
    const requests = Array.from({ length: 300 }, (_, i) => {
      const spans = new RequestSpans(parseTracingInstrumentations('all'), 1_764_000_000_000 + i, { 'http.url': `http://exämple.dev/ünï/${i}`, 'kong.request.id': 'x'.repeat(i), port: i, flag: i % 2 === 1 });
      // now and then a value of tens of KiB: past the encoder's scratch memory and the slab's share
      if (i % 100 === 50) spans.root.attributes.big = 'é'.repeat(20_000 + i);
      spans.endWhen(spans.start(`stage ✓ ${i}`));
      spans.finishOpen(spans.root.startMs + 2);
      return spans.spans.map((span) => ({ traceId: spans.traceId, span, drawn: spans }));
    });
    const chunks = requests.map((spans) => spanEncoder.encode(spans[0]!.traceId, spans.map((s) => s.span), spans[0]!.drawn));
    expect(Buffer.from(encoder.encode(chunks)).equals(Buffer.from(reference(requests.flat(), { 'service.name': 'kong' })))).toBe(true);
  });

  it('writes spans without attributes from their templates as the generated class writes them: any kind, status, parent and trace id size', () => {
    const spanEncoder = new SpanEncoder();
    const encoder = new TraceEncoder(resourceBytes({ 'service.name': 'kong' }));
    const requests = Array.from({ length: 40 }, (_, i) => {
      const spans = new RequestSpans(parseTracingInstrumentations('all'), 1_764_000_000_000.5 + i, { 'http.method': 'GET' });
      // a short incoming trace id is written field by field; the others take the templates
      if (i % 5 === 4) spans.traceId = 'abcdef0123456789';
      const child = spans.start(`kong.access.plugin.p${i % 3}`, i % 3);
      child.status = i % 2 === 0 ? 0 : 2;
      // a span under another than the root, and one without a parent
      const grandchild = spans.start('kong.dns', SpanKind.CLIENT);
      grandchild.parentId = child.spanId;
      spans.start('kong.orphan').parentId = null;
      spans.endWhen(child);
      spans.finishOpen(spans.root.startMs + 3.25);
      return spans.spans.map((span) => ({ traceId: spans.traceId, span, drawn: spans }));
    });
    const chunks = requests.map((spans) => spanEncoder.encode(spans[0]!.traceId, spans.map((s) => s.span), spans[0]!.drawn));
    expect(Buffer.from(encoder.encode(chunks)).equals(Buffer.from(reference(requests.flat(), { 'service.name': 'kong' })))).toBe(true);
    // a request whose first span is a template span (no root attributes) still copies the right parent and trace id
    const bare = new RequestSpans(parseTracingInstrumentations('all'), 1_764_000_000_000, {});
    const alone = bare.start('kong.router');
    bare.root.attributes = NO_ATTRIBUTES;
    bare.finishOpen(bare.root.startMs + 1);
    const batch = bare.spans.map((span) => ({ traceId: bare.traceId, span }));
    expect(alone.parentId).toBe(bare.root.spanId);
    expect(Buffer.from(encoder.encode([spanEncoder.encode(bare.traceId, bare.spans, bare)])).equals(Buffer.from(reference(batch, { 'service.name': 'kong' })))).toBe(true);
  });

  it('turns epoch milliseconds into exact 64-bit nanoseconds', () => {
    for (const ms of [0, 0.000001, 999.9999994, 1_764_000_000_000.123, 4_102_444_800_000.5, 1_700_000_000_123.987, Date.now() + performance.now() % 1]) {
      const seconds = Math.floor(ms / 1000);
      const expected = BigInt(seconds) * 1_000_000_000n + BigInt(Math.round((ms - seconds * 1000) * 1e6));
      const { low, high } = unixNanos(ms);
      expect((BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)).toBe(expected);
    }
  });

  it('writes hex ids as Buffer.write does: mixed case, odd lengths, and zeros from a pair that is not hex on', () => {
    for (const hex of ['0123456789abcdef', 'ABCDEFabcdef0a1b', 'abc', '12zz3456', '12é4', '']) {
      const length = hex.length >>> 1;
      const ours = Buffer.alloc(length + 2, 0xff);
      const theirs = Buffer.alloc(length + 2, 0xff);
      expect(writeHex(ours, 1, hex, length)).toBe(1 + length);
      const written = theirs.write(hex, 1, length, 'hex');
      theirs.fill(0, 1 + written, 1 + length);
      expect(ours.toString('hex')).toBe(theirs.toString('hex'));
    }
  });
});
