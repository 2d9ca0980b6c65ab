import type { PluginContext, PluginResponse } from '../contract';
import type { RouteType } from './llm-schema';
import type { JsonObject } from './providers';
import { parseObject } from './openai-format';

/** Where the AI plugins of one request share the parsed body (Kong's "request body table in use"). */
const REQUEST_KEY = 'ai:request-body';

/** Kong's AI error answer: `{ error: { message } }`. */
export function aiError(status: number, message: string): PluginResponse {
  return { status, body: { error: { message } } };
}

/**
 * The request body as a JSON object, shared by every AI plugin of the request: read once (up to `maxSize` bytes,
 * Kong's `max_request_body_size`), or as an earlier AI plugin left it. Null when it is not a JSON object or too large.
 */
export async function readAiRequest(ctx: PluginContext, maxSize: number): Promise<JsonObject | null> {
  const shared = ctx.locals?.get(REQUEST_KEY) as JsonObject | undefined;
  if (shared !== undefined) return shared;
  const type = String(ctx.req.headers['content-type'] ?? 'application/json').toLowerCase();
  if (!type.includes('json')) return null;
  const body = await ctx.req.readBody();
  if (body.length > maxSize) return null;
  const parsed = parseObject(body.toString('utf8'));
  if (parsed !== null) ctx.locals?.set(REQUEST_KEY, parsed);
  return parsed;
}

/** Replaces the request body for the next AI plugin and for the upstream. */
export function writeAiRequest(ctx: PluginContext, body: JsonObject): void {
  ctx.locals?.set(REQUEST_KEY, body);
  ctx.upstream.setBody(Buffer.from(JSON.stringify(body)), 'application/json');
}

/** Which LLM format a request is in (Kong's `identify_request`), or why it is none or several. */
export function requestFormat(request: JsonObject): { format: Exclude<RouteType, 'preserve'> } | { error: string } {
  const formats: Array<Exclude<RouteType, 'preserve'>> = [];
  if (Array.isArray(request.messages) && request.messages.length > 0) formats.push('llm/v1/chat');
  if (typeof request.prompt === 'string') formats.push('llm/v1/completions');
  if (formats.length > 1) return { error: 'request matches multiple LLM request formats' };
  if (formats.length === 0) return { error: 'request format not recognised' };
  return { format: formats[0]! };
}

/** Kong's `validate_incoming`: chat messages or a completion prompt. */
export function hasPrompts(request: JsonObject): boolean {
  return (Array.isArray(request.messages) && request.messages.length > 0) || typeof request.prompt === 'string';
}
