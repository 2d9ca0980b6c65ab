import { request as httpRequest } from 'undici';
import type { PluginContext, PluginResponse } from '../contract';
import { aiError, hasPrompts, readAiRequest, requestFormat } from '../ai/llm-request';
import { formatOf, providerUrl, type JsonObject, type ProviderFormat } from '../ai/providers';
import { LlmStatistics } from '../ai/statistics';
import { authenticate } from '../ai/llm-call';
import { sseTransform } from '../ai/sse';
import type { LlmModel } from '../ai/llm-schema';
import type { AiProxyConfig } from './schema';

type Checked = { body: JsonObject; model: LlmModel; stream: boolean; format: ProviderFormat | null } | PluginResponse;

/** Kong's request normalisation: the body's format, the model and streaming checked against the configuration. */
function checkRequest(request: JsonObject, config: AiProxyConfig): Checked {
  const preserve = config.route_type === 'preserve';
  if (!preserve && !hasPrompts(request)) return aiError(400, "request body doesn't contain valid prompts");
  const requested = typeof request.model === 'string' ? request.model : null;
  const model: LlmModel = { ...config.model, name: config.model.name ?? requested };
  if (requested !== null && requested !== '' && requested !== model.name) return aiError(400, `cannot use own model - must be: ${model.name}`);
  if (model.name === null && !preserve) return aiError(400, 'model parameter not found in request, nor in gateway configuration');
  if (!preserve) {
    const found = requestFormat(request);
    if ('error' in found) return aiError(400, found.error);
    if (found.format !== config.route_type) return aiError(400, `[${found.format}] message format is not compatible with [${config.route_type}] route type`);
  }
  const stream = request.stream === true || config.response_streaming === 'always';
  if (stream && config.response_streaming === 'deny') return aiError(400, 'response streaming is not enabled for this LLM');
  if (preserve) return { body: request, model, stream, format: null };
  const format = formatOf(config);
  if (typeof format === 'string') return aiError(400, format);
  const body = format.toProvider(stream ? { ...request, stream: true } : request, model, config.route_type as Exclude<typeof config.route_type, 'preserve'>);
  if (typeof body === 'string') return aiError(400, `error transforming to ${config.model.provider}://${config.route_type}`);
  return { body, model, stream, format };
}

/**
 * ai-proxy's access phase: the client's OpenAI-format request is checked, translated for the configured provider and
 * sent to it; the answer is translated back (a whole JSON body, or server-sent events chunk by chunk as they arrive)
 * and returned in place of the service's. Provider errors (non-200) pass through as the provider sent them.
 */
export async function aiProxyAccess(ctx: PluginContext, config: AiProxyConfig): Promise<PluginResponse> {
  const request = await readAiRequest(ctx, config.max_request_body_size);
  if (request === null) return aiError(400, 'content-type header does not match request body, or bad JSON formatting');
  const checked = checkRequest(request, config);
  if ('status' in checked) return checked;
  const url = providerUrl(config, config.route_type);
  if (url === null) return aiError(400, `no default endpoint for provider ${config.model.provider}: set model.options.upstream_url`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: checked.stream ? 'text/event-stream' : 'application/json', ...(checked.format?.headers?.(checked.model) ?? {}) };
  authenticate(config.auth, url, headers, checked.body, {
    header: (name) => {
      const sent = ctx.req.headers[name];
      return typeof sent === 'string' ? sent : undefined;
    },
    query: (name) => ctx.req.query.get(name),
  });
  const stats = new LlmStatistics(ctx, config, checked.model, request);
  const timeout = typeof ctx.service?.read_timeout === 'number' ? ctx.service.read_timeout : 60_000;
  let res;
  try {
    res = await httpRequest(url, { method: 'POST', headers, body: JSON.stringify(checked.body), headersTimeout: timeout, bodyTimeout: timeout });
  } catch (err) {
    ctx.runtime.log?.error('ai-proxy: the provider could not be reached', { provider: config.model.provider, reason: err instanceof Error ? err.message : String(err) });
    return aiError(502, 'An invalid response was received from the upstream server');
  }
  const contentType = String(res.headers['content-type'] ?? 'application/json');
  const modelHeader: Record<string, string> = config.model_name_header && checked.model.name !== null ? { 'x-kong-llm-model': `${config.model.provider}/${checked.model.name}` } : {};
  if (res.statusCode !== 200) {
    return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()), headers: { 'content-type': contentType }, proxied: true };
  }
  const format = checked.format;
  if (checked.stream && format !== null) {
    const state = new Map<string, unknown>();
    const translated = sseTransform(
      (event) => {
        const out = format.fromStreamEvent(event, checked.model, state);
        if ('error' in out) return [];
        if (out.usage) stats.addUsage(out.usage);
        if (out.data !== undefined) stats.addStreamed(out.data);
        return out.done === true ? [] : out.data !== undefined ? [out.data] : [];
      },
      () => {
        stats.finish(null);
        return ['[DONE]'];
      },
    );
    res.body.on('error', (err) => translated.destroy(err));
    return { status: 200, body: res.body.pipe(translated), headers: { 'content-type': 'text/event-stream', ...modelHeader }, proxied: true };
  }
  const text = await res.body.text();
  const out = format === null ? { body: text } : format.fromProvider(text, config.route_type as Exclude<typeof config.route_type, 'preserve'>);
  if ('error' in out) {
    const message = `transformation failed from type ${config.model.provider}://${config.route_type}: ${out.error}`;
    ctx.runtime.log?.error('ai-proxy: issue when transforming the response body', { reason: message });
    return aiError(500, message);
  }
  stats.finish(out.body);
  return { status: 200, body: Buffer.from(out.body), headers: { 'content-type': format === null ? contentType : 'application/json', ...modelHeader }, proxied: true };
}
