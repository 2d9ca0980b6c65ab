import type { JsonObject, LlmUsage, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';

interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** OpenAI tool calls as Anthropic `tool_use` blocks. */
function toolUses(calls: unknown[]): JsonObject[] {
  return calls.map((call) => {
    const c = call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    let input: unknown = {};
    try {
      input = typeof c.function?.arguments === 'string' ? JSON.parse(c.function.arguments) : {};
    } catch {
      input = {};
    }
    return { type: 'tool_use', id: c.id, name: c.function?.name, input };
  });
}

/** OpenAI chat messages as Anthropic's: other roles become the `system` prompt, tool answers user `tool_result`s. */
function toClaudeMessages(messages: ChatMessage[]): { messages: JsonObject[]; system: unknown } {
  const out: JsonObject[] = [];
  let system: unknown;
  for (const m of messages) {
    if (m.role !== 'assistant' && m.role !== 'user' && m.role !== 'tool') system = m.content;
    else if (m.role === 'assistant' && Array.isArray(m.tool_calls)) out.push({ role: 'assistant', content: toolUses(m.tool_calls) });
    else if (m.role === 'tool') out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content }] });
    else out.push(m as JsonObject);
  }
  return { messages: out, system };
}

/** The legacy text-completions prompt: `Human:` / `Assistant:` turns. */
function toClaudePrompt(request: JsonObject): string | null {
  if (typeof request.prompt === 'string') return `Human: ${request.prompt}\n\nAssistant:`;
  if (!Array.isArray(request.messages)) return null;
  let prompt = '';
  for (const m of request.messages as ChatMessage[]) {
    if (m.role === 'assistant') prompt += 'Assistant: ';
    else if (m.role === 'user') prompt += 'Human: ';
    prompt += `${String(m.content)}\n\n`;
  }
  return `${prompt}Assistant:`;
}

function toTools(tools: unknown[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const tool of tools) {
    const fn = (tool as { function?: JsonObject }).function;
    if (fn === undefined) continue;
    const { parameters, ...rest } = fn;
    out.push({ ...rest, input_schema: parameters });
  }
  return out;
}

function contentText(content: unknown[]): string {
  return content
    .filter((block): block is { text: string } => typeof (block as { text?: unknown }).text === 'string')
    .map((block) => block.text)
    .join('\n');
}

function contentTools(content: unknown[]): JsonObject[] | undefined {
  const uses = content.filter((block) => (block as { type?: unknown }).type === 'tool_use') as Array<{ id: unknown; name: unknown; input: unknown }>;
  if (uses.length === 0) return undefined;
  return uses.map((use) => ({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input) } }));
}

function chunk(state: Map<string, unknown>, model: string | null, delta: JsonObject, extra: JsonObject = {}): string {
  return JSON.stringify({
    choices: [{ delta, index: 0, finish_reason: null, logprobs: null }],
    id: state.get('id') ?? null,
    model,
    object: 'chat.completion.chunk',
    ...extra,
  });
}

/** Anthropic's Messages and Complete APIs, translated as Kong's anthropic driver does. */
export const anthropicFormat: ProviderFormat = {
  toProvider(request, model, routeType) {
    const merged = mergeModelDefaults(request, model);
    if (routeType === 'llm/v1/chat') {
      if (!Array.isArray(request.messages)) return 'request is missing .messages command';
      const { messages, system } = toClaudeMessages(request.messages as ChatMessage[]);
      return {
        messages,
        ...(system !== undefined ? { system } : {}),
        temperature: merged.temperature,
        max_tokens: merged.max_tokens,
        model: model.name ?? request.model,
        stream: request.stream ?? false,
        ...(Array.isArray(request.tools) ? { tools: toTools(request.tools) } : {}),
        ...(request.tool_choice !== undefined ? { tool_choice: request.tool_choice } : {}),
      };
    }
    const prompt = toClaudePrompt(request);
    if (prompt === null) return 'request is missing .prompt and .messages commands';
    return { prompt, temperature: merged.temperature, max_tokens_to_sample: merged.max_tokens, model: model.name ?? request.model, stream: request.stream ?? false };
  },
  fromProvider(text, routeType) {
    const body = parseObject(text);
    if (body === null) return { error: 'failed to decode anthropic response' };
    if (routeType === 'llm/v1/completions') {
      if (body.completion === undefined) return { error: "'completion' not in anthropic://llm/v1/chat response" };
      return { body: JSON.stringify({ choices: [{ index: 0, text: body.completion, finish_reason: body.stop_reason }], model: body.model, object: 'text_completion' }) };
    }
    if (!Array.isArray(body.content)) return { error: "'content' not in anthropic://llm/v1/chat response" };
    const usage = body.usage as { input_tokens?: number; output_tokens?: number } | undefined;
    const tools = contentTools(body.content);
    return {
      body: JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: contentText(body.content), ...(tools ? { tool_calls: tools } : {}) }, finish_reason: body.stop_reason }],
        usage: usage
          ? { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0) }
          : 'no usage data returned from upstream',
        model: body.model,
        object: 'chat.completion',
      }),
    };
  },
  fromStreamEvent(event, model, state) {
    const data = parseObject(event.data);
    if (event.event === null || data === null) return { error: 'transformation to stream event failed or empty stream event received' };
    switch (event.event) {
      case 'message_start': {
        const message = data.message as { id?: unknown; role?: unknown; usage?: { input_tokens?: number; output_tokens?: number } } | undefined;
        if (message === undefined) return { error: 'message_start is missing the metadata block' };
        state.set('id', message.id ?? null);
        const usage: LlmUsage = {};
        if (typeof message.usage?.input_tokens === 'number') usage.prompt_tokens = message.usage.input_tokens;
        return { data: chunk(state, model.name, { content: '', role: message.role }, { system_fingerprint: null }), usage };
      }
      case 'content_block_start':
      case 'content_block_delta': {
        const delta = data.delta as { text?: unknown } | undefined;
        return { data: chunk(state, model.name, { content: typeof delta?.text === 'string' ? delta.text : '' }) };
      }
      case 'message_delta': {
        const usage = data.usage as { output_tokens?: number } | undefined;
        if (usage === undefined) return { error: 'message_delta is missing the metadata block' };
        return typeof usage.output_tokens === 'number' ? { usage: { completion_tokens: usage.output_tokens } } : {};
      }
      case 'message_stop':
        return { done: true };
      default:
        return {};
    }
  },
  headers(model): Record<string, string> {
    return model.options.anthropic_version !== null ? { 'anthropic-version': model.options.anthropic_version } : {};
  },
};
