import type { TracingContext, TracingFormat } from './context';
import { hexToDecimal, SPAN_ID_BYTES, toIdSize } from './ids';

/** What an injector writes: headers to set upstream, and the trace id as the format spells it (for the log entry). */
export interface Injection {
  headers: Record<string, string>;
  traceId: Record<string, string>;
}

interface Injector {
  /** context fields that must be present */
  requires: Array<'traceId' | 'spanId'>;
  /** trace id sizes in bytes this format carries; the first is used unless the incoming size is one of them */
  traceIdBytes: number[];
  headers(ctx: TracingContext): Record<string, string>;
  formattedTraceId(traceId: string | undefined): Record<string, string>;
}

const sampledBit = (ctx: TracingContext) => (ctx.shouldSample ? '01' : '00');

function withBaggage(headers: Record<string, string>, baggage: Record<string, string> | undefined, prefix: string): Record<string, string> {
  if (baggage) for (const [k, v] of Object.entries(baggage)) headers[`${prefix}${k}`] = encodeURIComponent(v);
  return headers;
}

const INJECTORS: Readonly<Record<TracingFormat, Injector>> = {
  w3c: {
    requires: ['traceId', 'spanId'],
    traceIdBytes: [16],
    headers: (ctx) => ({ traceparent: `00-${ctx.traceId}-${ctx.spanId}-${sampledBit(ctx)}` }),
    formattedTraceId: (id) => ({ w3c: id ?? '' }),
  },
  b3: {
    requires: [],
    traceIdBytes: [16, 8],
    headers: (ctx) => {
      const headers: Record<string, string> = {};
      if (ctx.traceId && ctx.spanId) {
        headers['x-b3-traceid'] = ctx.traceId;
        headers['x-b3-spanid'] = ctx.spanId;
        if (ctx.parentId) headers['x-b3-parentspanid'] = ctx.parentId;
      }
      if (ctx.flags !== undefined) headers['x-b3-flags'] = ctx.flags;
      else headers['x-b3-sampled'] = ctx.shouldSample ? '1' : '0';
      return headers;
    },
    formattedTraceId: (id) => ({ b3: id ?? '' }),
  },
  'b3-single': {
    requires: [],
    traceIdBytes: [16, 8],
    headers: (ctx) => {
      const sampled = ctx.flags === '1' ? 'd' : ctx.shouldSample ? '1' : ctx.shouldSample === false ? '0' : undefined;
      if (!ctx.traceId || !ctx.spanId) return { b3: sampled ?? '0' };
      return { b3: `${ctx.traceId}-${ctx.spanId}${sampled ? `-${sampled}` : ''}${ctx.parentId ? `-${ctx.parentId}` : ''}` };
    },
    formattedTraceId: (id) => ({ b3: id ?? '' }),
  },
  jaeger: {
    requires: ['traceId', 'spanId'],
    traceIdBytes: [16, 8],
    headers: (ctx) => withBaggage({ 'uber-trace-id': `${ctx.traceId}:${ctx.spanId}:${ctx.parentId ?? '0'}:${sampledBit(ctx)}` }, ctx.baggage, 'uberctx-'),
    formattedTraceId: (id) => ({ jaeger: id ?? '' }),
  },
  ot: {
    requires: ['traceId', 'spanId'],
    traceIdBytes: [8, 16],
    headers: (ctx) => {
      const headers: Record<string, string> = { 'ot-tracer-traceid': ctx.traceId!, 'ot-tracer-spanid': ctx.spanId! };
      if (ctx.shouldSample !== undefined) headers['ot-tracer-sampled'] = ctx.shouldSample ? '1' : '0';
      return withBaggage(headers, ctx.baggage, 'ot-baggage-');
    },
    formattedTraceId: (id) => ({ ot: id ?? '' }),
  },
  aws: {
    requires: ['traceId', 'spanId'],
    traceIdBytes: [16],
    headers: (ctx) => ({ 'x-amzn-trace-id': `Root=1-${ctx.traceId!.slice(0, 8)}-${ctx.traceId!.slice(8)};Parent=${ctx.spanId};Sampled=${ctx.shouldSample ? '1' : '0'}` }),
    formattedTraceId: (id) => ({ aws: id ?? '' }),
  },
  gcp: {
    requires: ['traceId', 'spanId'],
    traceIdBytes: [16],
    headers: (ctx) => ({ 'x-cloud-trace-context': `${ctx.traceId}/${hexToDecimal(ctx.spanId!)};o=${ctx.shouldSample ? '1' : '0'}` }),
    formattedTraceId: (id) => ({ gcp: id ?? '' }),
  },
  datadog: {
    requires: [],
    traceIdBytes: [8],
    headers: (ctx) => {
      const headers: Record<string, string> = {};
      if (ctx.traceId) headers['x-datadog-trace-id'] = hexToDecimal(ctx.traceId);
      if (ctx.spanId) headers['x-datadog-parent-id'] = hexToDecimal(ctx.spanId);
      if (ctx.shouldSample !== undefined) headers['x-datadog-sampling-priority'] = ctx.shouldSample ? '1' : '0';
      return headers;
    },
    formattedTraceId: (id) => ({ datadog: id === undefined ? '' : hexToDecimal(id) }),
  },
};

/**
 * The headers of one format for a context, ids resized to what the format carries (an incoming 8-byte b3 trace id
 * stays 8 bytes; W3C always has 16). An error names what the context lacks.
 */
export function inject(format: TracingFormat, ctx: TracingContext): Injection | { error: string } {
  const injector = INJECTORS[format];
  const missing = injector.requires.find((field) => ctx[field] === undefined);
  if (missing !== undefined) return { error: `${format} injector context is invalid: field ${missing === 'traceId' ? 'trace_id' : 'span_id'} not found in context` };
  const original = ctx.traceIdOriginalBytes;
  const size = original !== undefined && injector.traceIdBytes.includes(original) ? original : injector.traceIdBytes[0]!;
  const sized: TracingContext = {
    ...ctx,
    ...(ctx.traceId !== undefined ? { traceId: toIdSize(ctx.traceId, size) } : {}),
    ...(ctx.spanId !== undefined ? { spanId: toIdSize(ctx.spanId, SPAN_ID_BYTES) } : {}),
    ...(ctx.parentId !== undefined ? { parentId: toIdSize(ctx.parentId, SPAN_ID_BYTES) } : {}),
  };
  return { headers: injector.headers(sized), traceId: injector.formattedTraceId(sized.traceId) };
}
