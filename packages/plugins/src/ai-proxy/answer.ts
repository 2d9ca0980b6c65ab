import type { Dispatcher } from 'undici';
import type { PluginContext, PluginResponse } from '../contract';
import { aiError } from '../ai/llm-request';
import type { ProviderFormat } from '../ai/providers';
import type { LlmStatistics } from '../ai/statistics';
import type { NativeFormat } from '../ai/native-formats';
import type { TokenBudget } from '../ai/token-limits';
import type { LlmModel } from '../ai/llm-schema';
import { parseObject } from '../ai/openai-format';
import { eventTap, eventTransform, sseFramer } from '../ai/sse';
import type { AiProxyConfig } from './schema';

type ChatRouteType = Exclude<AiProxyConfig['route_type'], 'preserve'>;

/** What the answer is read with: the provider's format, the client's native format if any, and the call's accounting. */
export interface Answering {
  format: ProviderFormat | null;
  native: NativeFormat | null;
  model: LlmModel;
  stats: LlmStatistics;
  budget: TokenBudget | null;
  stream: boolean;
  contentType: string;
  headers: Record<string, string>;
}

/** The provider's 200 answer for the client: translated whole, or streamed event by event. */
export async function answer(ctx: PluginContext, config: AiProxyConfig, res: Dispatcher.ResponseData, how: Answering): Promise<PluginResponse> {
  const { format, model, stats, budget, stream, contentType, headers } = how;
  const spend = (tokens: number) => void budget?.spend(tokens).catch((err: unknown) => ctx.runtime.log?.error('ai-proxy: tokens could not be counted', { reason: err instanceof Error ? err.message : String(err) }));
  if (how.native !== null && format !== null) return nativeAnswer(res, how, spend, format, how.native);
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

/**
 * A native-format answer (llm_format): the provider's body or stream goes to the client as sent; its token counts are
 * read from it on the way (Kong's adapters' `extract_metadata`).
 */
async function nativeAnswer(res: Dispatcher.ResponseData, how: Answering, spend: (tokens: number) => void, format: ProviderFormat, native: NativeFormat): Promise<PluginResponse> {
  const { model, stats, contentType, headers } = how;
  if (how.stream) {
    const state = new Map<string, unknown>();
    const tap = eventTap(
      format.framer?.() ?? sseFramer(),
      (event) => {
        const out = format.fromStreamEvent(event, model, state);
        if ('error' in out) return;
        if (out.usage) stats.addUsage(out.usage);
        if (out.data !== undefined) stats.addStreamed(out.data);
      },
      () => spend(stats.finish(null)),
    );
    res.body.on('error', (err) => tap.destroy(err));
    return { status: 200, body: res.body.pipe(tap), headers: { 'content-type': contentType, ...headers }, proxied: true };
  }
  const text = await res.body.text();
  const translated = format.fromProvider(text, 'llm/v1/chat');
  const parsed = parseObject(text);
  spend(stats.finish('body' in translated ? translated.body : null, parsed === null ? null : native.responseModel(parsed)));
  return { status: 200, body: Buffer.from(text), headers: { 'content-type': contentType, ...headers }, proxied: true };
}
