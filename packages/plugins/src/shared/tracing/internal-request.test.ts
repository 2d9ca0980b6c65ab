import { describe, expect, it } from '@jest/globals';
import { startInternalRequest } from './internal-request';
import { parseTracingInstrumentations, RequestSpans, SpanKind } from './request-spans';

const spansFor = (instrumentations: string) => new RequestSpans(parseTracingInstrumentations(instrumentations), Date.now(), {});

describe('kong.internal.request spans (http_client)', () => {
  it('records a call under the request span, its status once answered, and nothing more when it failed', () => {
    const spans = spansFor('http_client');
    const answered = startInternalRequest(spans, new URL('http://fn.test:8080/api/x?y=1'), 'POST', { 'User-Agent': 'agent/1' });
    const failed = startInternalRequest(spans, 'https://fn.test/api/z', 'GET', {});
    answered(201);
    failed(null);
    const [, first, second] = spans.spans;
    expect(first).toMatchObject({ name: 'kong.internal.request', kind: SpanKind.CLIENT, parentId: spans.root.spanId, status: 0 });
    expect(first!.attributes).toEqual({ 'http.url': 'http://fn.test:8080/api/x?y=1', 'http.method': 'POST', 'http.flavor': '1.1', 'http.user_agent': 'agent/1', 'http.status_code': 201 });
    expect(second!.attributes).toEqual({ 'http.url': 'https://fn.test/api/z', 'http.method': 'GET', 'http.flavor': '1.1' });
    for (const span of [first!, second!]) expect(span.endMs).toBeGreaterThanOrEqual(span.startMs);
  });

  it('records nothing without the http_client instrumentation, or without tracing', () => {
    const spans = spansFor('request,balancer');
    startInternalRequest(spans, 'http://fn.test/', 'GET', {})(200);
    startInternalRequest(null, 'http://fn.test/', 'GET', {})(200);
    expect(spans.spans.map((s) => s.name)).toEqual(['kong']);
  });
});
