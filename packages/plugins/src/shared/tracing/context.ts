/** The tracing formats Kong 3.9 extracts and injects. */
export const TRACING_FORMATS = ['w3c', 'b3', 'b3-single', 'jaeger', 'ot', 'aws', 'gcp', 'datadog'] as const;
export type TracingFormat = (typeof TRACING_FORMATS)[number];
/** b3 and b3-single are read by one extractor: `b3` */
export type ExtractFormat = Exclude<TracingFormat, 'b3-single'>;
export const EXTRACT_FORMATS = TRACING_FORMATS.filter((f): f is ExtractFormat => f !== 'b3-single');

/**
 * A tracing context read from (or written to) headers. Ids are hex; after extraction the trace id has 16 bytes and
 * span ids 8 bytes, with `traceIdOriginalBytes` telling how long the incoming trace id was.
 */
export interface TracingContext {
  traceId?: string;
  spanId?: string;
  parentId?: string;
  shouldSample?: boolean;
  /** the span id came from a format that shares span ids between client and server (b3, jaeger) */
  reuseSpanId?: boolean;
  traceIdOriginalBytes?: number;
  /** b3's debug flag (`1`) */
  flags?: string;
  /** W3C trace flags as a number */
  w3cFlags?: number;
  /** the incoming b3 context came in the single `b3` header */
  singleHeader?: boolean;
  /** jaeger `uberctx-*` and ot `ot-baggage-*` items */
  baggage?: Record<string, string>;
}

/** Request headers as plugins see them: lower-case names, repeated headers as arrays. */
export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

/** The first value of a header, as Kong's extractors read single headers. */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
