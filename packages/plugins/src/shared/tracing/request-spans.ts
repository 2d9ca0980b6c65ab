import { lastIdBytes, randomId, SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids';

/** Kong 3.9's `tracing_instrumentations` types, besides `off` and `all`. */
export const INSTRUMENTATION_TYPES = ['request', 'db_query', 'router', 'http_client', 'balancer', 'plugin_rewrite', 'plugin_access', 'plugin_header_filter', 'dns_query'] as const;
export type InstrumentationType = (typeof INSTRUMENTATION_TYPES)[number];

/** The data plane's tracing settings (Kong's `tracing_instrumentations`, `tracing_sampling_rate`). */
export interface TracingSettings {
  /** empty when tracing is `off`; every type for `all` */
  instrumentations: ReadonlySet<InstrumentationType>;
  samplingRate: number;
}

/** Reads `tracing_instrumentations` as Kong does; throws Kong's messages for unknown or contradictory values. */
export function parseTracingInstrumentations(value: string): ReadonlySet<InstrumentationType> {
  const items = value.split(',').map((v) => v.trim()).filter(Boolean);
  const list = items.length === 0 ? ['off'] : items;
  for (const item of list) {
    if (item !== 'off' && item !== 'all' && !(INSTRUMENTATION_TYPES as readonly string[]).includes(item)) throw new Error(`invalid tracing type: ${item}`);
  }
  if (list.length > 1 && list.includes('off')) throw new Error('invalid tracing types: off, other types are mutually exclusive');
  if (list[0] === 'off') return new Set();
  if (list.includes('all')) return new Set(INSTRUMENTATION_TYPES);
  // the request span is the root of every other: any list records it
  return new Set([...(list as InstrumentationType[]), 'request']);
}

/** OpenTelemetry span kinds as the API numbers them (OTLP adds one). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;

export type SpanAttributes = Record<string, string | number | boolean>;

/** One span of a request. Times are epoch milliseconds with sub-millisecond digits. */
export interface RecordedSpan {
  name: string;
  kind: number;
  spanId: string;
  /** the parent's span id; for the root, the incoming context's span id (set by a tracing plugin) or null */
  parentId: string | null;
  startMs: number;
  endMs: number | null;
  attributes: SpanAttributes;
  /** 0 unset, 2 error */
  status: 0 | 2;
  /**
   * where the span id's bytes are when it was drawn by `randomId` (the random pool and the offset in it), for encoders
   * that write ids as bytes; null or absent otherwise
   */
  idPool?: Uint8Array | null;
  idAt?: number;
}

/** The trace id a request drew and where its bytes are (see `RecordedSpan.idPool`). */
export interface DrawnTraceId {
  readonly drawnTraceId: string;
  readonly traceIdPool: Uint8Array;
  readonly traceIdAt: number;
}

/**
 * The attributes of a span that has none (the router's, the plugin phases'), shared by all of them: encoders know
 * such a span by it. Frozen, so that a span given no attributes at its start keeps none.
 */
export const NO_ATTRIBUTES: SpanAttributes = Object.freeze({});

/** the process's time origin (epoch ms): a getter call each time `performance.timeOrigin` is read */
const TIME_ORIGIN = performance.timeOrigin;

/** Epoch milliseconds now, with sub-millisecond precision. */
export function nowMs(): number {
  return TIME_ORIGIN + performance.now();
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The spans of one request when tracing instrumentations are on: the `kong` request span (the root), and a span per
 * instrumented stage (router, plugin hooks, balancer). The data plane records them; a tracing plugin sets the trace
 * id and the root's parent from incoming headers, and exports them at the end of the exchange.
 */
export class RequestSpans implements DrawnTraceId {
  /** the request's trace id: the one it drew, until a tracing plugin sets the incoming context's */
  traceId: string;
  readonly drawnTraceId: string;
  readonly traceIdPool: Uint8Array;
  readonly traceIdAt: number;
  readonly root: RecordedSpan;
  readonly spans: RecordedSpan[];
  /** the balancer span's id, made before the balancer runs so the upstream's tracing headers can name it */
  readonly balancerSpanId: string | null;
  private readonly balancerIdPool: Uint8Array | null = null;
  private readonly balancerIdAt: number = 0;

  constructor(
    private readonly enabled: ReadonlySet<InstrumentationType>,
    startMs: number,
    attributes: SpanAttributes,
  ) {
    this.traceId = this.drawnTraceId = randomId(TRACE_ID_BYTES);
    this.traceIdPool = lastIdBytes.pool;
    this.traceIdAt = lastIdBytes.at;
    const spanId = randomId(SPAN_ID_BYTES);
    this.root = { name: 'kong', kind: SpanKind.SERVER, spanId, parentId: null, startMs, endMs: null, attributes, status: 0, idPool: lastIdBytes.pool, idAt: lastIdBytes.at };
    this.spans = [this.root];
    if (enabled.has('balancer')) {
      this.balancerSpanId = randomId(SPAN_ID_BYTES);
      this.balancerIdPool = lastIdBytes.pool;
      this.balancerIdAt = lastIdBytes.at;
    } else this.balancerSpanId = null;
  }

  has(type: InstrumentationType): boolean {
    return this.enabled.has(type);
  }

  /** starts a child of the root span, with a new id or `spanId` (the balancer span's, drawn before) */
  start(name: string, kind: number = SpanKind.INTERNAL, attributes: SpanAttributes = NO_ATTRIBUTES, spanId?: string): RecordedSpan {
    let idPool: Uint8Array | null = null;
    let idAt = 0;
    if (spanId === undefined) {
      spanId = randomId(SPAN_ID_BYTES);
      idPool = lastIdBytes.pool;
      idAt = lastIdBytes.at;
    } else if (spanId === this.balancerSpanId) {
      idPool = this.balancerIdPool;
      idAt = this.balancerIdAt;
    }
    const span: RecordedSpan = { name, kind, spanId, parentId: this.root.spanId, startMs: nowMs(), endMs: null, attributes, status: 0, idPool, idAt };
    this.spans.push(span);
    return span;
  }

  /** ends a span now, or once `result` settles when it is a promise (a plugin hook that went asynchronous) */
  endWhen(span: RecordedSpan, result?: unknown): void {
    if (!isThenable(result)) {
      span.endMs = nowMs();
      return;
    }
    const end = () => void (span.endMs = nowMs());
    result.then(end, end);
  }

  /** ends the spans still open (the root, the balancer span at the response's end) */
  finishOpen(atMs: number): void {
    for (const span of this.spans) span.endMs ??= atMs;
  }
}
