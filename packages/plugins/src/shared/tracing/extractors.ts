import { headerValue, type ExtractFormat, type HeaderBag, type TracingContext } from './context';
import { decimalToHex, evenHex, isHex, isZero } from './ids';

type Extractor = (headers: HeaderBag) => TracingContext | null;

const has = (headers: HeaderBag, names: readonly string[]) => names.some((n) => headers[n] !== undefined);

function baggageOf(headers: HeaderBag, prefix: string): Record<string, string> | undefined {
  let baggage: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(prefix) || value === undefined) continue;
    const raw = Array.isArray(value) ? value[0]! : value;
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // kept as sent
    }
    (baggage ??= {})[name.slice(prefix.length)] = decoded;
  }
  return baggage;
}

/** `traceparent: 00-<32 hex>-<16 hex>-<2 hex>` */
function w3c(headers: HeaderBag): TracingContext | null {
  const value = headerValue(headers, 'traceparent');
  if (value === undefined || value === '') return null;
  const m = /^([0-9a-fA-F]+)-([0-9a-fA-F]+)-([0-9a-fA-F]+)-([0-9a-fA-F]+)$/.exec(value);
  if (m === null || m[1] !== '00') return null;
  const traceId = m[2]!;
  const parentId = m[3]!;
  const flags = m[4]!;
  if (traceId.length !== 32 || isZero(traceId) || parentId.length !== 16 || isZero(parentId) || flags.length !== 2) return null;
  const w3cFlags = parseInt(flags, 16);
  return { traceId: traceId.toLowerCase(), spanId: parentId.toLowerCase(), shouldSample: w3cFlags % 2 === 1, w3cFlags };
}

function b3Sampled(value: string | undefined): boolean | undefined {
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return undefined;
}

function b3Single(headers: HeaderBag): (TracingContext & { invalid?: boolean }) | null {
  let value = headerValue(headers, 'b3');
  if (value === undefined) {
    const states = headers.tracestate;
    for (const state of Array.isArray(states) ? states : states === undefined ? [] : [states]) {
      const m = /^b3=(.+)$/.exec(state);
      if (m !== null) {
        value = m[1];
        break;
      }
    }
  }
  if (value === undefined) return null;
  if (value === '1' || value === 'd') return { shouldSample: true, ...(value === 'd' ? { flags: '1' } : {}) };
  if (value === '0') return { shouldSample: false };
  const m = /^([0-9a-fA-F]+)-([0-9a-fA-F]{16})-?([01d]?)-?([0-9a-fA-F]*)$/.exec(value);
  if (m === null || (m[1]!.length !== 16 && m[1]!.length !== 32) || (m[4] !== '' && m[4]!.length !== 16)) return { invalid: true };
  const sampled = m[3];
  return {
    traceId: m[1]!.toLowerCase(),
    spanId: m[2]!.toLowerCase(),
    ...(m[4] !== '' ? { parentId: m[4]!.toLowerCase() } : {}),
    ...(sampled === '1' || sampled === 'd' ? { shouldSample: true } : sampled === '0' ? { shouldSample: false } : {}),
    ...(sampled === 'd' ? { flags: '1' } : {}),
  };
}

function b3(headers: HeaderBag): TracingContext | null {
  if (!has(headers, ['b3', 'tracestate', 'x-b3-traceid', 'x-b3-spanid', 'x-b3-parentspanid', 'x-b3-sampled', 'x-b3-flags'])) return null;
  const single = b3Single(headers);
  let shouldSample = single?.shouldSample;
  let flags = single?.flags;
  let traceId = single?.invalid ? undefined : single?.traceId;
  let spanId = single?.invalid ? undefined : single?.spanId;
  let parentId = single?.invalid ? undefined : single?.parentId;
  const debug = headerValue(headers, 'x-b3-flags');
  const multiSampled = debug === '1' ? true : b3Sampled(headerValue(headers, 'x-b3-sampled'));
  shouldSample ??= multiSampled;
  flags ??= debug;
  const id = (name: string, lengths: number[]) => {
    const v = headerValue(headers, name);
    return v === undefined ? { ok: true, v } : { ok: lengths.includes(v.length) && isHex(v), v: v.toLowerCase() };
  };
  const t = id('x-b3-traceid', [16, 32]);
  const s = id('x-b3-spanid', [16]);
  const p = id('x-b3-parentspanid', [16]);
  if (t.ok && s.ok && p.ok) {
    traceId ??= t.v;
    spanId ??= s.v;
    parentId ??= p.v;
  }
  if (traceId === undefined) spanId = parentId = undefined;
  return {
    ...(traceId !== undefined ? { traceId } : {}),
    ...(spanId !== undefined ? { spanId } : {}),
    ...(parentId !== undefined ? { parentId } : {}),
    reuseSpanId: true,
    ...(shouldSample !== undefined ? { shouldSample } : {}),
    ...(flags !== undefined ? { flags } : {}),
    ...(single !== null ? { singleHeader: true } : {}),
  };
}

/** `uber-trace-id: trace:span:parent:flags` */
function jaeger(headers: HeaderBag): TracingContext | null {
  const value = headerValue(headers, 'uber-trace-id');
  if (value === undefined || value === '') return null;
  const m = /^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)$/.exec(value);
  if (m === null) return null;
  const traceId = m[1]!;
  const spanId = m[2]!;
  const parentId = m[3]!;
  const flags = m[4]!;
  if (traceId.length > 32 || isZero(traceId) || spanId.length > 16 || isZero(spanId)) return null;
  if (flags.length !== 1 && flags.length !== 2) return null;
  const baggage = baggageOf(headers, 'uberctx-');
  return {
    traceId: evenHex(traceId),
    spanId: evenHex(spanId),
    parentId: evenHex(parentId),
    reuseSpanId: true,
    shouldSample: parseInt(flags, 16) % 2 === 1,
    ...(baggage ? { baggage } : {}),
  };
}

function ot(headers: HeaderBag): TracingContext | null {
  if (!has(headers, ['ot-tracer-sampled', 'ot-tracer-traceid', 'ot-tracer-spanid'])) return null;
  const shouldSample = b3Sampled(headerValue(headers, 'ot-tracer-sampled'));
  const traceId = headerValue(headers, 'ot-tracer-traceid');
  const spanId = headerValue(headers, 'ot-tracer-spanid');
  const traceOk = traceId === undefined || ((traceId.length === 16 || traceId.length === 32) && isHex(traceId));
  const spanOk = spanId === undefined || (spanId.length === 16 && isHex(spanId));
  const ids = traceId !== undefined && traceOk && spanOk ? { traceId: traceId.toLowerCase(), ...(spanId ? { spanId: spanId.toLowerCase() } : {}) } : {};
  const baggage = baggageOf(headers, 'ot-baggage-');
  return { ...ids, ...(shouldSample !== undefined ? { shouldSample } : {}), ...(baggage ? { baggage } : {}) };
}

/** `x-amzn-trace-id: Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=0|1` */
function aws(headers: HeaderBag): TracingContext | null {
  const value = headerValue(headers, 'x-amzn-trace-id');
  if (value === undefined) return null;
  const ctx: TracingContext = {};
  for (const pair of value.split(';')) {
    const [rawKey, rawValue] = pair.split('=');
    const key = (rawKey ?? '').trim();
    const v = (rawValue ?? '').trim();
    if (key === 'Root') {
      const m = /^([0-9a-fA-F]+)-([0-9a-fA-F]+)-([0-9a-fA-F]+)$/.exec(v);
      if (v.length !== 35 || m === null || m[1] !== '1' || m[2]!.length !== 8 || m[3]!.length !== 24) return null;
      ctx.traceId = (m[2]! + m[3]!).toLowerCase();
    } else if (key === 'Parent') {
      if (v.length !== 16 || !isHex(v)) return null;
      ctx.spanId = v.toLowerCase();
    } else if (key === 'Sampled') {
      if (v !== '0' && v !== '1') return null;
      ctx.shouldSample = v === '1';
    }
  }
  return ctx;
}

/** `x-cloud-trace-context: <32 hex>/<decimal span id>;o=<flag>` */
function gcp(headers: HeaderBag): TracingContext | null {
  const value = headerValue(headers, 'x-cloud-trace-context');
  if (value === undefined) return null;
  const m = /^([0-9a-f]{32})\/([0-9]{1,20})(;o=([0-9]))?$/.exec(value);
  if (m === null) return null;
  return { traceId: m[1]!, spanId: decimalToHex(m[2]!)!, shouldSample: m[4] === '1' };
}

function datadog(headers: HeaderBag): TracingContext | null {
  if (!has(headers, ['x-datadog-trace-id', 'x-datadog-parent-id', 'x-datadog-sampling-priority'])) return null;
  const priority = headerValue(headers, 'x-datadog-sampling-priority');
  let shouldSample: boolean | undefined;
  if (priority === '1' || priority === '2') shouldSample = true;
  else if (priority === '0' || priority === '-1') shouldSample = false;
  else if (priority !== undefined) return null;
  const decimal = (name: string) => /^\s*(\d+)\s*$/.exec(headerValue(headers, name) ?? '')?.[1];
  const traceId = decimal('x-datadog-trace-id');
  const parentId = traceId === undefined ? undefined : decimal('x-datadog-parent-id');
  return {
    ...(traceId !== undefined ? { traceId: decimalToHex(traceId)! } : {}),
    ...(parentId !== undefined ? { spanId: decimalToHex(parentId)! } : {}),
    ...(shouldSample !== undefined ? { shouldSample } : {}),
  };
}

export const EXTRACTORS: Readonly<Record<ExtractFormat, Extractor>> = { w3c, b3, jaeger, ot, aws, gcp, datadog };
