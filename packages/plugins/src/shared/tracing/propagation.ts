import { z } from 'zod';
import { EXTRACT_FORMATS, TRACING_FORMATS, type ExtractFormat, type HeaderBag, type TracingContext, type TracingFormat } from './context';
import { EXTRACTORS } from './extractors';
import { inject } from './injectors';
import { SPAN_ID_BYTES, toIdSize, TRACE_ID_BYTES } from './ids';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** Kong's `propagation` record (extract, clear, inject, default_format), with the plugin's default format. */
export function propagationSchema(defaultFormat: TracingFormat) {
  const schema = z
    .object({
      extract: z.array(z.enum(EXTRACT_FORMATS)).nullable().default(null),
      clear: z.array(z.string().regex(HEADER_NAME, 'bad header name')).nullable().default(null),
      inject: z.array(z.enum(['preserve', ...TRACING_FORMATS])).nullable().default(null),
      default_format: z.enum(TRACING_FORMATS),
    })
    .strict();
  return schema.default(schema.parse({ default_format: defaultFormat }));
}

export type PropagationConfig = z.infer<ReturnType<typeof propagationSchema>>;

/** The deprecated `header_type` values (and zipkin's `default_header_type`) as Kong 3.9 still reads them. */
export interface LegacyPropagation {
  header_type?: string | null;
  default_header_type?: string | null;
}

const LEGACY_EXTRACT: ExtractFormat[] = ['b3', 'w3c', 'jaeger', 'ot', 'datadog', 'aws', 'gcp'];

/**
 * The propagation settings in force: the `propagation` record when any of extract/clear/inject is set, else the
 * deprecated `header_type` mapped as Kong does (`preserve`: read every format, write the one read; `ignore`: write the
 * default format only; a format: read every format, write the one read and that format).
 */
export function effectivePropagation(propagation: PropagationConfig, legacy: LegacyPropagation): PropagationConfig {
  if (propagation.extract !== null || propagation.clear !== null || propagation.inject !== null) return propagation;
  const defaultFormat = (legacy.default_header_type as TracingFormat | null | undefined) ?? propagation.default_format;
  const headerType = legacy.header_type;
  if (headerType === null || headerType === undefined) return { ...propagation, default_format: defaultFormat };
  if (headerType === 'preserve') return { extract: LEGACY_EXTRACT, clear: null, inject: ['preserve'], default_format: defaultFormat };
  if (headerType === 'ignore') return { extract: null, clear: null, inject: [defaultFormat], default_format: defaultFormat };
  return { extract: LEGACY_EXTRACT, clear: null, inject: ['preserve', headerType as TracingFormat], default_format: defaultFormat };
}

/** A tracing plugin's configuration, as far as propagation goes. */
export interface PropagationSettings extends LegacyPropagation {
  propagation: PropagationConfig;
}

/** the settings in force per configuration object (a snapshot's, unchanged while it serves) */
const IN_FORCE = new WeakMap<PropagationSettings, PropagationConfig>();

/** `effectivePropagation` of a plugin configuration, worked out once per configuration object, not per request. */
export function propagationInForce(config: PropagationSettings): PropagationConfig {
  let inForce = IN_FORCE.get(config);
  if (inForce === undefined) IN_FORCE.set(config, (inForce = effectivePropagation(config.propagation, config)));
  return inForce;
}

export interface Extracted {
  ctx: TracingContext;
  /** the format the context came from; null when none matched */
  format: ExtractFormat | null;
}

/** Reads the tracing context from the first format in `extract` whose headers carry one. */
export function extractContext(conf: PropagationConfig, headers: HeaderBag): Extracted {
  for (const format of conf.extract ?? []) {
    const found = EXTRACTORS[format](headers);
    if (found === null || Object.keys(found).length === 0) continue;
    const ctx: TracingContext = { ...found };
    if (found.traceId !== undefined) {
      ctx.traceIdOriginalBytes = Math.ceil(found.traceId.length / 2);
      ctx.traceId = toIdSize(found.traceId, TRACE_ID_BYTES);
    }
    if (found.spanId !== undefined) ctx.spanId = toIdSize(found.spanId, SPAN_ID_BYTES);
    if (found.parentId !== undefined) ctx.parentId = toIdSize(found.parentId, SPAN_ID_BYTES);
    return { ctx, format };
  }
  return { ctx: {}, format: null };
}

export interface HeaderWriter {
  setHeader(name: string, value: string): void;
  removeHeader(name: string): void;
}

/**
 * Clears the `clear` headers, then writes the context in every `inject` format (`preserve`: the format it was read
 * in, else `default_format`; a b3 context read from the single header is written as b3-single). Returns the trace id
 * as each format spells it (Kong's `trace_id` log value), or null when nothing was injected; errors are reported.
 */
export function injectContext(
  conf: PropagationConfig,
  extracted: Extracted,
  ctx: TracingContext,
  upstream: HeaderWriter,
  onError: (message: string) => void,
): Record<string, string> | null {
  for (const name of conf.clear ?? []) upstream.removeHeader(name);
  if (conf.inject === null) return null;
  let traceIds: Record<string, string> | null = null;
  for (const choice of conf.inject) {
    let format: TracingFormat = choice === 'preserve' ? (extracted.format ?? conf.default_format ?? 'w3c') : choice;
    if (choice === 'preserve' && format === 'b3' && ctx.singleHeader) format = 'b3-single';
    const result = inject(format, ctx);
    if ('error' in result) {
      onError(result.error);
      continue;
    }
    const headers = result.headers;
    for (const name in headers) upstream.setHeader(name, headers[name]!);
    // each injection's trace-id record is its own (made by the injector): the first is kept and the others added in
    traceIds = traceIds === null ? result.traceId : Object.assign(traceIds, result.traceId);
  }
  return traceIds;
}
