import type { PluginContext } from '../contract';
import { nowMs, type SpanAttributes } from './tracing/request-spans';

/** Kong's log levels (`kong.log.<level>`, `ngx.<LEVEL>`), most verbose first. */
const LEVEL_RANK: Readonly<Record<string, number>> = { debug: 0, info: 1, notice: 2, warn: 3, err: 4, error: 4, crit: 5, alert: 6, emerg: 7 };

/** OTLP severity number and text per level, as Kong maps nginx's levels (`ngx.STDERR` has none). */
export const SEVERITY: Readonly<Record<string, readonly [number, string]>> = {
  debug: [5, 'DEBUG'],
  info: [9, 'INFO'],
  notice: [11, 'NOTICE'],
  warn: [13, 'WARN'],
  err: [17, 'ERR'],
  crit: [19, 'CRIT'],
  alert: [21, 'ALERT'],
  emerg: [23, 'EMERG'],
};

/** One log line written during a request (Kong's request-scoped observability log entry). */
export interface RequestLogRecord {
  /** epoch milliseconds it was written */
  timeMs: number;
  level: string;
  body: string;
  /** `introspection.*` (where it was written) and any the caller added; `request.id` is added at export */
  attributes: SpanAttributes;
  /** the span open when it was written (tracing instrumentations on), else null */
  spanId: string | null;
}

/** Where the caller of a log function is (a Lua snippet's chunk and line, as Lua's `debug.getinfo` tells). */
export interface LogIntrospection {
  currentLine?: number;
  source?: string;
  name?: string;
  namewhat?: string;
  what?: string;
}

const KEY = 'observability:request-logs';
/** Kong keeps up to this many log lines per request; later ones are dropped */
const MAX_REQUEST_LOGS = 1000;

/** the innermost span still open: a plugin hook's while it runs, else the request span */
function activeSpanId(ctx: PluginContext): string | null {
  const spans = ctx.spans ?? null;
  if (spans === null) return null;
  for (let i = spans.spans.length - 1; i > 0; i--) if (spans.spans[i]!.endMs === null) return spans.spans[i]!.spanId;
  return spans.root.spanId;
}

/**
 * Keeps a log line written during the request for the opentelemetry plugin's `logs_endpoint`, as Kong's
 * observability logs do: lines below the node's log level (when the runtime tells it) are not kept.
 */
export function pushRequestLog(ctx: PluginContext, level: string, body: string, where: LogIntrospection = {}): void {
  const locals = ctx.locals;
  if (locals === undefined) return;
  const configured = ctx.runtime.logLevel?.();
  if (configured !== undefined && (LEVEL_RANK[level] ?? 0) < (LEVEL_RANK[configured] ?? 0)) return;
  let logs = locals.get(KEY) as RequestLogRecord[] | undefined;
  if (logs === undefined) locals.set(KEY, (logs = []));
  if (logs.length >= MAX_REQUEST_LOGS) return;
  const attributes: SpanAttributes = {};
  if (where.currentLine !== undefined) attributes['introspection.current.line'] = where.currentLine;
  if (where.name !== undefined) attributes['introspection.name'] = where.name;
  if (where.namewhat !== undefined) attributes['introspection.namewhat'] = where.namewhat;
  if (where.source !== undefined) attributes['introspection.source'] = where.source;
  if (where.what !== undefined) attributes['introspection.what'] = where.what;
  logs.push({ timeMs: nowMs(), level, body, attributes, spanId: activeSpanId(ctx) });
}

/** The log lines kept for this request so far. */
export function requestLogs(ctx: PluginContext): readonly RequestLogRecord[] {
  return (ctx.locals?.get(KEY) as RequestLogRecord[] | undefined) ?? [];
}
