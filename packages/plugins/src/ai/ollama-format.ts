import type { JsonObject, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';

/** Ollama's chat and generate APIs (Llama 2 and Mistral servers in their `ollama` mode), as Kong's shared driver code translates them. */
export const ollamaFormat: ProviderFormat = {
  toProvider(request, model) {
    if (request.prompt !== undefined && request.messages !== undefined) return "cannot run raw 'prompt' and chat history 'messages' requests at the same time - refer to schema";
    const merged = mergeModelDefaults(request, model);
    const body: JsonObject = {
      ...(request.messages !== undefined ? { messages: request.messages } : { prompt: request.prompt }),
      stream: request.stream ?? false,
      model: model.name ?? request.model,
      options: { num_predict: merged.max_tokens, temperature: merged.temperature, top_p: merged.top_p, top_k: merged.top_k },
    };
    if (request.tools !== undefined) body.tools = request.tools;
    if (request.tool_choice !== undefined) body.tool_choice = request.tool_choice;
    return body;
  },
  fromProvider(text, routeType) {
    const body = parseObject(text);
    if (body === null) return { error: 'failed to decode ollama response' };
    const completion = typeof body.eval_count === 'number' ? body.eval_count : 0;
    const prompt = typeof body.prompt_eval_count === 'number' ? body.prompt_eval_count : 0;
    const usage = { completion_tokens: completion, prompt_tokens: prompt, total_tokens: completion + prompt };
    const base = { model: body.model, created: body.created_at, usage };
    if (routeType === 'llm/v1/chat') return { body: JSON.stringify({ ...base, object: 'chat.completion', choices: [{ finish_reason: body.finish_reason ?? 'stop', index: 0, message: body.message }] }) };
    return { body: JSON.stringify({ ...base, object: 'text_completion', choices: [{ index: 0, text: body.response }] }) };
  },
  fromStreamEvent(event) {
    const data = parseObject(event.data);
    if (data === null) return { error: 'failed to decode ollama response' };
    if (data.done === true) {
      return { done: true, usage: { prompt_tokens: typeof data.prompt_eval_count === 'number' ? data.prompt_eval_count : 0, completion_tokens: typeof data.eval_count === 'number' ? data.eval_count : 0 } };
    }
    const message = data.message as { content?: unknown } | undefined;
    if (message !== undefined) return { data: JSON.stringify({ choices: [{ delta: { content: typeof message.content === 'string' ? message.content : '' }, index: 0 }], model: data.model, object: 'chat.completion.chunk' }) };
    return { data: JSON.stringify({ choices: [{ text: typeof data.response === 'string' ? data.response : '', index: 0 }], model: data.model, object: 'text_completion' }) };
  },
};
