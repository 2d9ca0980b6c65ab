import type { ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** Chat messages in Llama 2's instruction template (`<s>[INST] <<SYS>> … <</SYS>> … [/INST]`), as Kong writes it. */
function toInstructions(messages: ChatMessage[]): string {
  let text = '';
  messages.forEach((m, i) => {
    const content = String(m.content ?? '');
    if (i === 0) text += `<s>[INST] <<SYS>> ${content} <</SYS>>`;
    else if (i === 1) text += ` ${content} [/INST]`;
    else if (m.role === 'system') text += ` ${content} </s>`;
    else if (m.role === 'user') text += ` <s>[INST] ${content} [/INST]`;
  });
  return text;
}

/** A Llama 2 text-generation endpoint taking the raw instruction prompt (`llama2_format: raw`), as Kong's driver. */
export const llama2RawFormat: ProviderFormat = {
  toProvider(request, model) {
    if (request.prompt !== undefined && request.messages !== undefined) return "cannot run raw 'prompt' and chat history 'messages' requests at the same time - refer to schema";
    const merged = mergeModelDefaults(request, model);
    const inputs = Array.isArray(request.messages)
      ? toInstructions(request.messages as ChatMessage[])
      : `<s> [INST] <<SYS>> You are a helpful assistant. <<SYS>> ${String(request.prompt)} [/INST]`;
    return { inputs, parameters: { max_new_tokens: merged.max_tokens, top_p: merged.top_p, top_k: merged.top_k, temperature: merged.temperature, stream: request.stream ?? false } };
  },
  fromProvider(text, routeType) {
    const body = parseObject(text);
    if (body === null) return { error: 'failed to decode llama2 response' };
    const data = body.data as Array<{ generated_text?: unknown }> | undefined;
    if (!Array.isArray(data) || data.length > 1) return { error: 'cannot parse response from llama2 endpoint' };
    const generated = data[0]?.generated_text;
    if (typeof generated !== 'string') return { error: 'response data is empty from llama2 endpoint' };
    const reply = generated.split('[/INST]').at(-1)!.trim();
    const choice = routeType === 'llm/v1/chat' ? { message: { content: reply, role: 'assistant' }, index: 0 } : { index: 0, text: reply };
    return { body: JSON.stringify({ choices: [choice], object: routeType === 'llm/v1/chat' ? 'chat.completion' : 'text_completion', ...(body.usage !== undefined ? { usage: body.usage } : {}) }) };
  },
  fromStreamEvent() {
    return { error: 'llama2 raw format does not stream' };
  },
};
