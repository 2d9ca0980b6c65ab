import { request as httpRequest, type Dispatcher } from 'undici';
import type { PluginContext, PluginResponse } from '../contract';
import { aiError, hasPrompts, readAiRequest, requestFormat } from '../ai/llm-request';
import { formatOf, providerUrl, type JsonObject, type ProviderFormat } from '../ai/providers';
import { LlmStatistics } from '../ai/statistics';
import { authenticate } from '../ai/llm-call';
import { NATIVE_FORMATS, type NativeFormat } from '../ai/native-formats';
import { answer } from './answer';
import { TokenBudget } from '../ai/token-limits';
import type { LlmAuth, LlmModel } from '../ai/llm-schema';
import type { AiProxyConfig } from './schema';

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
function prepare(ctx: PluginContext, config: AiProxyConfig, target: Target, request: JsonObject, stream: boolean, nativeBody: JsonObject | null): { url: URL; headers: Record<string, string>; body: JsonObject; format: ProviderFormat | null } | PluginResponse {
  const targetConfig = { ...config, model: target.model, auth: target.auth };
  const url = providerUrl(targetConfig, config.route_type, stream);
  if (url === null) return aiError(400, `no default endpoint for provider ${target.model.provider}: set model.options.upstream_url`);
  let format: ProviderFormat | null = null;
  let body = request;
  if (config.route_type !== 'preserve') {
    const found = formatOf(targetConfig);
    if (typeof found === 'string') return aiError(400, found);
    format = found;
    if (nativeBody !== null) body = { ...nativeBody };
    else {
      const translated = found.toProvider(stream ? { ...request, stream: true } : request, target.model, config.route_type);
      if (typeof translated === 'string') return aiError(400, `error transforming to ${target.model.provider}://${config.route_type}`);
      body = translated;
    }
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
  const body = await readAiRequest(ctx, config.max_request_body_size);
  if (body === null) return aiError(400, 'content-type header does not match request body, or bad JSON formatting');
  // a native-format client (llm_format): its body goes to the provider as sent; the checks read it in OpenAI's format
  const native: NativeFormat | null = config.llm_format === 'openai' ? null : NATIVE_FORMATS[config.llm_format];
  const request = native === null ? body : native.toOpenai(body, ctx.req.path, ctx.req.uriCaptures?.named ?? {});
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
    const prepared = prepare(ctx, config, { ...target, model }, request, checked.stream, native === null ? null : body);
    if ('status' in prepared) return prepared;
    let res: Dispatcher.ResponseData;
    const calledAt = Date.now();
    const payload = JSON.stringify(prepared.body);
    let sent = prepared.headers;
    if (prepared.format?.sign) {
      const signed = await prepared.format.sign({ url: prepared.url, method: 'POST', headers: sent, body: payload }, model, target.auth);
      if (typeof signed === 'string') {
        ctx.runtime.log?.error('ai-proxy: error authenticating with the provider using its native auth', { provider: model.provider, reason: signed });
        return aiError(500, 'LLM request failed before proxying');
      }
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
    return answer(ctx, config, res, { format: prepared.format, native, model, stats, budget, stream: checked.stream, contentType, headers });
  }
  return last;
}
