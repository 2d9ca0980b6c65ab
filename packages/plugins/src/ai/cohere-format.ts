import type { JsonObject, LlmUsage, ProviderFormat } from './providers';
import { parseObject } from './openai-format';

interface CohereMeta {
  billed_units?: { input_tokens?: number; output_tokens?: number };
}

function billedUsage(meta: CohereMeta | undefined): JsonObject | undefined {
  const units = meta?.billed_units;
  if (units === undefined) return undefined;
  return { prompt_tokens: units.input_tokens, completion_tokens: units.output_tokens, total_tokens: (units.input_tokens ?? 0) + (units.output_tokens ?? 0) };
}

/** Cohere's v1 Chat and Generate APIs, translated as Kong's cohere driver does. */
export const cohereFormat: ProviderFormat = {
  toProvider(request, model) {
    const { top_p, top_k, messages, ...rest } = request;
    const body: JsonObject = { ...rest, model: model.name ?? request.model, stream: request.stream ?? false };
    const options = model.options;
    if (options.temperature !== null) body.temperature = options.temperature;
    if (options.max_tokens !== null) body.max_tokens = options.max_tokens;
    body.p = options.top_p ?? top_p;
    body.k = options.top_k ?? top_k;
    if (request.prompt !== undefined && messages !== undefined) return "cannot run a 'prompt' and a history of 'messages' at the same time - refer to schema";
    if (Array.isArray(messages)) {
      const list = messages as Array<{ role?: unknown; content?: unknown }>;
      if (list.length > 1) body.chat_history = list.slice(0, -1).map((m) => ({ role: m.role === 'assistant' || m.role === 'CHATBOT' ? 'CHATBOT' : 'USER', message: m.content }));
      body.message = list[list.length - 1]?.content;
    }
    return body;
  },
  fromProvider(text, routeType) {
    const body = parseObject(text);
    if (body === null) return { error: 'failed to decode cohere response' };
    const meta = body.meta as CohereMeta | undefined;
    if (body.prompt !== undefined && Array.isArray(body.generations)) {
      const choices = (body.generations as Array<{ text?: unknown }>).map((g, index) => ({ index, text: g.text, finish_reason: 'stop' }));
      return { body: JSON.stringify({ choices, object: 'text_completion', model: body.model, id: body.id, usage: billedUsage(meta) }) };
    }
    if (typeof body.text === 'string') {
      const tokens = body.token_count as { prompt_tokens?: number; response_tokens?: number; total_tokens?: number } | undefined;
      const usage = routeType === 'llm/v1/chat' ? billedUsage(meta) : tokens && { prompt_tokens: tokens.prompt_tokens, completion_tokens: tokens.response_tokens, total_tokens: tokens.total_tokens };
      return { body: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: body.text }, finish_reason: 'stop' }], object: 'chat.completion', model: body.model, id: body.generation_id, usage }) };
    }
    return { error: "'text' or 'generations' missing from cohere response body" };
  },
  fromStreamEvent(event, model, state) {
    const data = parseObject(event.data);
    if (data === null) return { error: 'failed to decode event frame from cohere' };
    const chunk = (delta: JsonObject, id: unknown) => JSON.stringify({ choices: [{ delta, index: 0, finish_reason: null, logprobs: null }], id, model: model.name, object: 'chat.completion.chunk' });
    switch (data.event_type) {
      case 'stream-start':
        state.set('id', data.generation_id);
        return { data: chunk({ content: '', role: 'assistant' }, data.generation_id) };
      case 'text-generation':
        return { data: chunk({ content: typeof data.text === 'string' ? data.text : '' }, state.get('id')) };
      case 'stream-end': {
        const response = data.response as { meta?: CohereMeta } | undefined;
        const units = response?.meta?.billed_units;
        const usage: LlmUsage = { prompt_tokens: units?.input_tokens ?? 0, completion_tokens: units?.output_tokens ?? 0 };
        return { done: true, usage };
      }
      default:
        return {};
    }
  },
};
