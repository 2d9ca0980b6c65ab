import type { LlmModel, LlmAuth } from './llm-schema';
import type { JsonObject, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';
import { awsEventStreamFramer } from './aws-event-stream';
import { signAwsRequest } from '../shared/aws-signer';
import { resolveAwsCredentials } from '../shared/aws-credentials';

const STOP_REASONS: Record<string, string> = { max_tokens: 'length', end_turn: 'stop', tool_use: 'tool_calls', guardrail_intervened: 'guardrail_intervened' };

/** The region a Bedrock call goes to: `model.options.bedrock.aws_region`, else `AWS_REGION` / `AWS_DEFAULT_REGION`. */
export function bedrockRegion(model: LlmModel, env: NodeJS.ProcessEnv = process.env): string | null {
  return model.options.bedrock?.aws_region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? null;
}

/** Bedrock's Converse URL for the model (`converse-stream` when streaming); an `upstream_url` origin replaces AWS's. */
export function bedrockUrl(model: LlmModel, stream: boolean): URL | null {
  const operation = stream ? 'converse-stream' : 'converse';
  const path = `/model/${encodeURIComponent(model.name ?? '')}/${operation}`;
  if (model.options.upstream_url !== null) return new URL(path, new URL(model.options.upstream_url).origin);
  const region = bedrockRegion(model);
  return region === null ? null : new URL(`https://bedrock-runtime.${region}.amazonaws.com${path}`);
}

function text(content: unknown): JsonObject[] {
  return typeof content === 'string' ? [{ text: content }] : Array.isArray(content) ? (content as JsonObject[]).map((p) => ({ text: p.text })) : [];
}

/** Amazon Bedrock's Converse API, signed with AWS Signature Version 4 (Kong's bedrock driver). */
export const bedrockFormat: ProviderFormat = {
  toProvider(request, model, routeType) {
    if (routeType !== 'llm/v1/chat' || !Array.isArray(request.messages)) return 'bedrock supports llm/v1/chat only';
    const merged = mergeModelDefaults(request, model);
    const system: JsonObject[] = [];
    const messages: JsonObject[] = [];
    for (const m of request.messages as Array<{ role?: unknown; content?: unknown }>) {
      if (m.role === 'system') system.push(...text(m.content));
      else messages.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content: text(m.content) });
    }
    return {
      messages,
      ...(system.length > 0 ? { system } : {}),
      inferenceConfig: { maxTokens: merged.max_tokens, stopSequences: merged.stop, temperature: merged.temperature, topP: merged.top_p },
    };
  },
  fromProvider(body) {
    const answer = parseObject(body) as { output?: { message?: { content?: Array<{ text?: unknown }> } }; stopReason?: string; usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number } } | null;
    if (answer === null) return { error: 'failed to decode bedrock response' };
    const content = answer.output?.message?.content;
    if (!Array.isArray(content)) return { error: "'output.message.content' not in bedrock response" };
    const usage = answer.usage;
    return {
      body: JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('') }, finish_reason: STOP_REASONS[answer.stopReason ?? ''] ?? answer.stopReason ?? 'stop' }],
        object: 'chat.completion',
        ...(usage ? { usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.totalTokens } } : {}),
      }),
    };
  },
  fromStreamEvent(event, model) {
    const data = parseObject(event.data);
    if (data === null) return { error: 'failed to decode bedrock stream event' };
    const chunk = (delta: JsonObject, finish: string | null = null) => JSON.stringify({ choices: [{ delta, index: 0, finish_reason: finish }], model: model.name, object: 'chat.completion.chunk' });
    switch (event.event) {
      case 'messageStart':
        return { data: chunk({ content: '', role: 'assistant' }) };
      case 'contentBlockDelta': {
        const delta = data.delta as { text?: unknown } | undefined;
        return { data: chunk({ content: typeof delta?.text === 'string' ? delta.text : '' }) };
      }
      case 'messageStop':
        return { data: chunk({}, STOP_REASONS[String(data.stopReason)] ?? String(data.stopReason ?? 'stop')) };
      case 'metadata': {
        const usage = data.usage as { inputTokens?: number; outputTokens?: number } | undefined;
        return { done: true, usage: { prompt_tokens: usage?.inputTokens ?? 0, completion_tokens: usage?.outputTokens ?? 0 } };
      }
      default:
        return {};
    }
  },
  framer: awsEventStreamFramer,
  async sign(request, model: LlmModel, auth: LlmAuth) {
    const region = bedrockRegion(model);
    if (region === null) return 'no AWS region: set model.options.bedrock.aws_region, or AWS_REGION';
    const credentials = await resolveAwsCredentials({ accessKeyId: auth.aws_access_key_id, secretAccessKey: auth.aws_secret_access_key, region, imds: 'auto' });
    if (typeof credentials === 'string') return credentials;
    return signAwsRequest(request, 'bedrock', region, credentials);
  },
};
