import { request as httpRequest, type Dispatcher } from 'undici';
import type { PluginContext, PluginResponse } from '../contract';
import { aiError, hasPrompts, readAiRequest, requestFormat } from '../ai/llm-request';
import { formatOf, providerUrl, type JsonObject, type ProviderFormat } from '../ai/providers';
import { LlmStatistics } from '../ai/statistics';
import { authenticate } from '../ai/llm-call';
import { eventTransform, sseFramer } from '../ai/sse';
import { TokenBudget } from '../ai/token-limits';
import type { LlmAuth, LlmModel } from '../ai/llm-schema';
import type { AiProxyConfig } from './schema';

type ChatRouteType = Exclude<AiProxyConfig['route_type'], 'preserve'>;

/** One provider and model the request may go to: the configured one, then each fallback in order. */
interface Target {
  model: LlmModel;
  auth: LlmAuth;
}

/** Kong's request normalisation: the body's format, the model and streaming checked against the configuration. */
function checkRequest(request: JsonObject, config: AiProxyConfig): { requested: string | null; stream: boolean } | PluginResponse {
  const preserve = config.route_type === 'preserve';
  if (!preserve && !hasPrompts(request)) return aiError(400, "request body doesn't contain valid prompts");
  const requested = typeof request.model === 'string' ? request.model : null;
  const name = config.model.name ?? requested;
  if (requested !== null && requested !== '' && requested !== name) return aiError(400, `cannot use own model - must be: ${name}`);
  if (name === null && !preserve) return aiError(400, 'model parameter not found in request, nor in gateway configuration');
  if (!preserve) {
    const found = requestFormat(request);
    if ('error' in found) return aiError(400, found.error);
    if (found.format !== config.route_type) return aiError(400, `[${found.format}] message format is not compatible with [${config.route_type}] route type`);
  }
  const stream = request.stream === true || config.response_streaming === 'always';
  if (stream && config.response_streaming === 'deny') return aiError(400, 'response streaming is not enabled for this LLM');
  return { requested, stream };
}

/** The provider's request for one target: its URL, headers and body, or the 400 answer when it cannot be built. */
function prepare(ctx: PluginContext, config: AiProxyConfig, target: Target, request: JsonObject, stream: boolean): { url: URL; headers: Record<string, string>; body: JsonObject; format: ProviderFormat | null } | PluginResponse {
  const targetConfig = { ...config, model: target.model, auth: target.auth };
  const url = providerUrl(targetConfig, config.route_type, stream);
  if (url === null) return aiError(400, `no default endpoint for provider ${target.model.provider}: set model.options.upstream_url`);
  let format: ProviderFormat | null = null;
  let body = request;
  if (config.route_type !== 'preserve') {
    const found = formatOf(targetConfig);
    if (typeof found === 'string') return aiError(400, found);
    const translated = found.toProvider(stream ? { ...request, stream: true } : request, target.model, config.route_type);
    if (typeof translated === 'string') return aiError(400, `error transforming to ${target.model.provider}://${config.route_type}`);
    format = found;
    body = translated;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...(format?.headers?.(target.model) ?? {}) };
  authenticate(target.auth, url, headers, body, {
    header: (name) => {
      const sent = ctx.req.headers[name];
      return typeof sent === 'string' ? sent : undefined;
    },
    query: (name) => ctx.req.query.get(name),
  });
  return { url, headers, body, format };
}

/** a provider answer that sends the request on to the next target: rate limited, or failing */
const triesNext = (status: number) => status === 429 || status >= 500;

/**
 * ai-proxy's access phase: the client's OpenAI-format request is checked, translated for the configured provider and
 * sent to it; the answer is translated back (a whole JSON body, or server-sent events chunk by chunk as they arrive)
 * and returned in place of the service's. A provider that answers 429 or 5xx, or cannot be reached, hands the request
 * to the next of `fallbacks`; the last one's error passes through as that provider sent it. With `token_limits`, a
 * consumer whose tokens are spent gets 429 before any provider is called.
 */
export async function aiProxyAccess(ctx: PluginContext, config: AiProxyConfig): Promise<PluginResponse> {
  const request = await readAiRequest(ctx, config.max_request_body_size);
  if (request === null) return aiError(400, 'content-type header does not match request body, or bad JSON formatting');
  const checked = checkRequest(request, config);
  if ('status' in checked) return checked;
  const budget = await TokenBudget.open(ctx, config.token_limits, ctx.pluginId ?? 'ai-proxy');
  const refusal = budget?.refusal() ?? null;
  if (refusal !== null) return refusal;
  const limitHeaders = budget?.headers() ?? {};
  const targets: Target[] = [{ model: config.model, auth: config.auth }, ...config.fallbacks.map((f) => ({ model: f.model, auth: f.auth ?? config.auth }))];
  const timeout = typeof ctx.service?.read_timeout === 'number' ? ctx.service.read_timeout : 60_000;
  let last: PluginResponse = aiError(502, 'An invalid response was received from the upstream server');
  for (const [index, target] of targets.entries()) {
    const model: LlmModel = { ...target.model, name: target.model.name ?? checked.requested };
    const prepared = prepare(ctx, config, { ...target, model }, request, checked.stream);
    if ('status' in prepared) return prepared;
    let res: Dispatcher.ResponseData;
    const calledAt = Date.now();
    const payload = JSON.stringify(prepared.body);
    let sent = prepared.headers;
    if (prepared.format?.sign) {
      const signed = await prepared.format.sign({ url: prepared.url, method: 'POST', headers: sent, body: payload }, model, target.auth);
      if (typeof signed === 'string') return aiError(500, signed);
      sent = signed;
    }
    try {
      res = await httpRequest(prepared.url, { method: 'POST', headers: sent, body: payload, headersTimeout: timeout, bodyTimeout: timeout });
    } catch (err) {
      ctx.runtime.log?.error('ai-proxy: the provider could not be reached', { provider: model.provider, target: index, reason: err instanceof Error ? err.message : String(err) });
      continue;
    }
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    if (res.statusCode !== 200) {
      last = { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()), headers: { 'content-type': contentType, ...limitHeaders }, proxied: true };
      if (triesNext(res.statusCode) && index < targets.length - 1) continue;
      return last;
    }
    const stats = new LlmStatistics(ctx, config, model, request, calledAt);
    const headers: Record<string, string> = { ...limitHeaders, ...(config.model_name_header && model.name !== null ? { 'x-kong-llm-model': `${model.provider}/${model.name}` } : {}) };
    return answer(ctx, config, res, prepared.format, model, stats, budget, checked.stream, contentType, headers);
  }
  return last;
}

/** The provider's 200 answer for the client: translated whole, or streamed event by event. */
async function answer(ctx: PluginContext, config: AiProxyConfig, res: Dispatcher.ResponseData, format: ProviderFormat | null, model: LlmModel, stats: LlmStatistics, budget: TokenBudget | null, stream: boolean, contentType: string, headers: Record<string, string>): Promise<PluginResponse> {
  const spend = (tokens: number) => void budget?.spend(tokens).catch((err: unknown) => ctx.runtime.log?.error('ai-proxy: tokens could not be counted', { reason: err instanceof Error ? err.message : String(err) }));
  if (stream && format !== null) {
    const state = new Map<string, unknown>();
    const translated = eventTransform(
      format.framer?.() ?? sseFramer(),
      (event) => {
        const out = format.fromStreamEvent(event, model, state);
        if ('error' in out) return [];
        if (out.usage) stats.addUsage(out.usage);
        if (out.data !== undefined) stats.addStreamed(out.data);
        return out.done === true ? [] : out.data !== undefined ? [out.data] : [];
      },
      () => {
        spend(stats.finish(null));
        return ['[DONE]'];
      },
    );
    res.body.on('error', (err) => translated.destroy(err));
    return { status: 200, body: res.body.pipe(translated), headers: { 'content-type': 'text/event-stream', ...headers }, proxied: true };
  }
  const text = await res.body.text();
  const out = format === null ? { body: text } : format.fromProvider(text, config.route_type as ChatRouteType);
  if ('error' in out) {
    const message = `transformation failed from type ${model.provider}://${config.route_type}: ${out.error}`;
    ctx.runtime.log?.error('ai-proxy: issue when transforming the response body', { reason: message });
    return aiError(500, message);
  }
  spend(stats.finish(out.body));
  return { status: 200, body: Buffer.from(out.body), headers: { 'content-type': format === null ? contentType : 'application/json', ...headers }, proxied: true };
}
