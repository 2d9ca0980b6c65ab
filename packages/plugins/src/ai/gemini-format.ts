import type { JsonObject, ProviderFormat } from './providers';
import { mergeModelDefaults } from './model-defaults';
import { parseObject } from './openai-format';
import { gcpAccessToken } from './gcp-auth';

const ROLES: Record<string, string> = { system: 'system', user: 'user', assistant: 'model' };

interface GeminiCandidate {
  content?: { parts?: Array<{ text?: unknown }> };
  finishReason?: unknown;
}

interface GeminiAnswer {
  candidates?: GeminiCandidate[];
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number };
}

/** An OpenAI content part as a Gemini part (text, or an image by data URL or URI). */
function toPart(part: { type?: unknown; text?: unknown; image_url?: { url?: unknown } }): JsonObject | string {
  if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
  if (part.type === 'image_url' && typeof part.image_url?.url === 'string') {
    const url = part.image_url.url;
    const data = /^data:([^;]+);([^,]+),(.*)$/s.exec(url);
    return data ? { inlineData: { data: data[3], mimeType: data[1] } } : { fileData: { fileUri: url, mimeType: 'image/generic' } };
  }
  return `cannot transform part of type '${String(part.type)}' to Gemini format`;
}

function firstText(answer: GeminiAnswer): string | null {
  const text = answer.candidates?.[0]?.content?.parts?.[0]?.text;
  return typeof text === 'string' ? text : null;
}

/** Google's Gemini generateContent API (Generative Language and Vertex AI), as Kong's gemini driver translates chat. */
export const geminiFormat: ProviderFormat = {
  toProvider(request, model, routeType) {
    if (routeType !== 'llm/v1/chat' || !Array.isArray(request.messages)) return 'gemini supports llm/v1/chat only';
    const merged = mergeModelDefaults(request, model);
    const contents: JsonObject[] = [];
    let system = '';
    for (const [i, message] of (request.messages as Array<{ role?: unknown; content?: unknown }>).entries()) {
      if (message.role === 'system') {
        system += typeof message.content === 'string' ? message.content : '';
        continue;
      }
      let parts: JsonObject[];
      if (typeof message.content === 'string') parts = [{ text: message.content }];
      else if (Array.isArray(message.content) && message.content.length > 0) {
        parts = [];
        for (const part of message.content) {
          const converted = toPart(part as Parameters<typeof toPart>[0]);
          if (typeof converted === 'string') return converted;
          parts.push(converted);
        }
      } else return `message at position ${i + 1} does not match expected array format`;
      contents.push({ role: ROLES[String(message.role ?? 'user')] ?? 'user', parts });
    }
    if (system !== '' && (model.name ?? '').startsWith('gemini-1.0')) return "system prompts aren't supported on gemini-1.0 models";
    return {
      contents,
      ...(system !== '' ? { systemInstruction: { parts: [{ text: system }] } } : {}),
      generationConfig: { maxOutputTokens: merged.max_tokens, stopSequences: merged.stop, temperature: merged.temperature, topK: merged.top_k, topP: merged.top_p },
    };
  },
  fromProvider(text) {
    const answer = parseObject(text) as GeminiAnswer | null;
    if (answer === null) return { error: 'failed to decode response from Gemini' };
    const content = firstText(answer);
    if (content === null) return { error: 'no generation candidates received from Gemini, or max_tokens too short' };
    const usage = answer.usageMetadata;
    return {
      body: JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: String(answer.candidates?.[0]?.finishReason ?? 'stop').toLowerCase() }],
        object: 'chat.completion',
        ...(usage ? { usage: { prompt_tokens: usage.promptTokenCount, completion_tokens: usage.candidatesTokenCount, total_tokens: usage.totalTokenCount } } : {}),
      }),
    };
  },
  fromStreamEvent(event, model) {
    if (event.data === '[DONE]') return { done: true };
    const answer = parseObject(event.data) as GeminiAnswer | null;
    if (answer === null) return { error: 'failed to decode stream event frame from gemini' };
    const content = firstText(answer);
    const usage = answer.usageMetadata;
    const counted = usage ? { usage: { prompt_tokens: usage.promptTokenCount ?? 0, completion_tokens: usage.candidatesTokenCount ?? 0 } } : {};
    if (content === null) return counted;
    const finish = answer.candidates?.[0]?.finishReason;
    return { data: JSON.stringify({ choices: [{ delta: { content, role: 'assistant' }, index: 0, finish_reason: finish ?? null }], model: model.name, object: 'chat.completion.chunk' }), ...counted };
  },
};

/** Gemini with a Google Cloud service account (`auth.gcp_use_service_account`): each call carries its OAuth2 bearer token. */
export const geminiServiceAccountFormat: ProviderFormat = {
  ...geminiFormat,
  async sign(request, _model, auth) {
    const found = await gcpAccessToken(auth.gcp_service_account_json);
    if (typeof found === 'string') return `cloud-authentication with GCP failed: ${found}`;
    return { ...request.headers, authorization: `Bearer ${found.token}` };
  },
};
