import type { JsonObject, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';

/**
 * Hugging Face's Inference API, as Kong's huggingface driver speaks it: chat to the model's OpenAI-compatible
 * `/v1/chat/completions`, completions as text generation (`inputs`), sampling options moved into `parameters` and
 * the API's `options` (`use_cache`, `wait_for_model`).
 */
export const huggingfaceFormat: ProviderFormat = {
  toProvider(request, model, routeType) {
    const merged = mergeModelDefaults(request, model);
    const { top_k, top_p, temperature, max_tokens, prompt, parameters, ...rest } = merged;
    const params: JsonObject = { ...((parameters as JsonObject | undefined) ?? {}) };
    params.top_k ??= top_k;
    params.top_p ??= top_p;
    params.temperature ??= temperature;
    if (params.max_tokens === undefined) {
      if (request.messages !== undefined) params.max_lenght = max_tokens;
      else params.max_new_tokens = max_tokens;
    }
    const hf = model.options.huggingface;
    return {
      ...rest,
      ...(routeType === 'llm/v1/completions' ? { inputs: prompt } : {}),
      options: { use_cache: hf?.use_cache ?? false, wait_for_model: hf?.wait_for_model ?? false },
      parameters: params,
      model: model.name ?? request.model,
    };
  },
  fromProvider(text, routeType) {
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      return { error: 'Failed to decode response' };
    }
    const first = Array.isArray(answer) ? (answer[0] as JsonObject | undefined) : undefined;
    const body = (Array.isArray(answer) ? {} : answer) as JsonObject;
    if (body.error !== undefined || body.message !== undefined) return { error: `API error: ${String(body.error ?? body.message)}` };
    const out: JsonObject = { model: body.model, object: body.object ?? routeType, choices: [], usage: body.usage ?? {} };
    if (typeof first?.generated_text === 'string') out.choices = [{ message: { content: first.generated_text }, index: 0, finish_reason: 'complete' }];
    else if (Array.isArray(body.choices)) {
      out.choices = (body.choices as Array<{ message?: { content?: unknown } }>).map((c, index) => ({ message: { content: c.message?.content ?? '' }, index, finish_reason: 'complete' }));
    } else return { error: 'Invalid response format' };
    return { body: JSON.stringify(out) };
  },
  fromStreamEvent(event, model) {
    if (event.data.trim() === '[DONE]') return { done: true };
    const data = parseObject(event.data);
    if (data === null) return { error: 'failed to decode stream event frame from Hugging Face' };
    const choice = (data.choices as Array<{ delta?: { content?: unknown } }> | undefined)?.[0];
    if (choice !== undefined) return { data: JSON.stringify({ choices: [{ delta: { content: typeof choice.delta?.content === 'string' ? choice.delta.content : '', role: 'assistant' }, index: 0 }], model: data.model ?? model.name, object: 'chat.completion.chunk' }) };
    const token = (data.token as { text?: unknown } | undefined)?.text;
    return { data: JSON.stringify({ choices: [{ text: typeof token === 'string' ? token : '', index: 0 }], model: model.name, object: 'text_completion' }) };
  },
};

/** The model's endpoint: `upstream_url` or the Inference API's URL for the model; chat adds `/v1/chat/completions`. */
export function huggingfaceUrl(upstreamUrl: string | null, name: string | null, routeType: string): URL | null {
  const base = upstreamUrl ?? (name !== null ? `https://api-inference.huggingface.co/models/${name}` : null);
  if (base === null) return null;
  return new URL(routeType === 'llm/v1/completions' ? base : `${base.replace(/\/$/, '')}/v1/chat/completions`);
}
