import type { JsonObject, LlmUsage, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';

/** Parses JSON text into an object, or null when it is not one. */
export function parseObject(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/** OpenAI's `usage` record, when the body carries one. */
export function usageOf(body: JsonObject | null): LlmUsage | undefined {
  const usage = body?.usage;
  if (usage === null || typeof usage !== 'object') return undefined;
  const { prompt_tokens, completion_tokens } = usage as Record<string, unknown>;
  return {
    ...(typeof prompt_tokens === 'number' ? { prompt_tokens } : {}),
    ...(typeof completion_tokens === 'number' ? { completion_tokens } : {}),
  };
}

/** OpenAI's own format (also Azure OpenAI, and Mistral and Llama 2 servers in their OpenAI mode): passed through. */
export const openaiFormat: ProviderFormat = {
  toProvider(request, model) {
    const body = mergeModelDefaults(request, model);
    body.model = model.name ?? request.model;
    body.stream = request.stream ?? false;
    delete body.top_k;
    return body;
  },
  fromProvider(text, routeType) {
    const body = parseObject(text);
    if (body === null) return { error: `failed to decode ${routeType} response` };
    if (body.choices === undefined) return { error: `'choices' not in ${routeType} response` };
    return { body: text };
  },
  fromStreamEvent(event) {
    if (event.data.trim() === '[DONE]') return { done: true };
    const usage = usageOf(parseObject(event.data));
    return usage !== undefined ? { data: event.data, usage } : { data: event.data };
  },
};
