import { randomId, SPAN_ID_BYTES } from '../shared/tracing/ids';

export type ZipkinKind = 'SERVER' | 'CLIENT';

/** A Zipkin span as the plugin builds it; times in epoch microseconds. */
export class ZipkinSpan {
  readonly spanId: string;
  tags: Record<string, string | number | boolean> = {};
  annotations: Array<{ value: string; timestamp: number }> = [];
  duration: number | null = null;
  /** the remote side: the service's name, address and port */
  serviceName: string | null = null;
  ip: string | null = null;
  port: number | null = null;

  constructor(
    readonly kind: ZipkinKind,
    readonly name: string,
    public timestamp: number,
    readonly shouldSample: boolean,
    readonly traceId: string,
    spanId: string | undefined,
    readonly parentId: string | undefined,
    readonly baggage: Record<string, string> | undefined,
  ) {
    this.spanId = spanId ?? randomId(SPAN_ID_BYTES);
  }

  child(kind: ZipkinKind, name: string, timestamp: number): ZipkinSpan {
    return new ZipkinSpan(kind, name, timestamp, this.shouldSample, this.traceId, undefined, this.spanId, this.baggage);
  }

  finish(at: number): void {
    this.duration = Math.max(0, Math.round(at - this.timestamp));
  }

  setTag(name: string, value: string | number | boolean | null | undefined): void {
    if (value !== null && value !== undefined) this.tags[name] = value;
  }

  annotate(value: string, timestamp: number): void {
    this.annotations.push({ value, timestamp: Math.round(timestamp) });
  }
}

/** Zipkin v2 JSON of a span, as Kong reports it: tags as non-empty strings, the remote endpoint when known. */
export function zipkinJson(span: ZipkinSpan, localServiceName: string, defaultServiceName: string | null): Record<string, unknown> {
  const tags: Record<string, string> = {};
  for (const [k, v] of Object.entries(span.tags)) if (v !== '') tags[k] = String(v);
  const serviceName = span.serviceName ?? defaultServiceName;
  let remoteEndpoint: Record<string, unknown> | null = null;
  if (span.port !== null || serviceName !== null) {
    remoteEndpoint = { ...(serviceName !== null ? { serviceName } : {}), ...(span.port !== null ? { port: span.port } : {}) };
    if (span.ip !== null) remoteEndpoint[span.ip.includes(':') ? 'ipv6' : 'ipv4'] = span.ip;
  }
  return {
    traceId: span.traceId,
    name: span.name,
    ...(span.parentId !== undefined ? { parentId: span.parentId } : {}),
    id: span.spanId,
    kind: span.kind,
    timestamp: Math.round(span.timestamp),
    duration: span.duration ?? 0,
    localEndpoint: { serviceName: localServiceName },
    remoteEndpoint,
    ...(Object.keys(tags).length > 0 ? { tags } : {}),
    ...(span.annotations.length > 0 ? { annotations: span.annotations } : {}),
  };
}

/** `name=value; name=value` pairs of the tags header; the items that do not parse are returned apart. */
export function parseTagsHeader(value: string | string[] | undefined): { tags: Record<string, string>; errors: string[] } {
  const tags: Record<string, string> = {};
  const errors: string[] = [];
  for (const line of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
    for (const item of line.split(';')) {
      if (item === '') continue;
      const m = /^\s*(\S+)\s*=\s*(.*\S)\s*$/.exec(item);
      if (m === null) errors.push(item);
      else tags[m[1]!] = m[2]!;
    }
  }
  return { tags, errors };
}
