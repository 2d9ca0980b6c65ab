import type { JsonObject } from './providers';

/**
 * A provider's own request format spoken by the client (Kong's `llm_format` adapters): the request read as the
 * OpenAI-format request the gateway's checks work on, the model and streaming taken from the request path, and the
 * native answer's token counts and model for statistics. The native body itself goes to the provider untouched.
 */
export interface NativeFormat {
  toOpenai(native: JsonObject, path: string, captures: Readonly<Record<string, string>>): JsonObject;
  /** the model that answered, as the native answer names it */
  responseModel(answer: JsonObject): string | null;
}

type Part = JsonObject | undefined;

const array = (value: unknown): JsonObject[] => (Array.isArray(value) ? (value as JsonObject[]) : []);

/** the model and operation from named captures `model` / `operation`, else from the path by `pattern` */
function modelAndOperation(path: string, captures: Readonly<Record<string, string>>, pattern: RegExp): { model: string | null; operation: string | null } {
  const m = pattern.exec(path);
  return { model: captures.model ?? m?.[1] ?? null, operation: captures.operation ?? m?.[2] ?? null };
}

/** the OpenAI-format request: the model and streaming from the path, the messages, and the sampling parameters given */
function openaiRequest(model: string | null, stream: boolean, messages: JsonObject[], parameters: JsonObject): JsonObject {
  const given = Object.entries(parameters).filter(([, v]) => v !== undefined);
  return { ...(model !== null ? { model } : {}), stream, ...(messages.length > 0 ? { messages } : {}), ...Object.fromEntries(given) };
}

function geminiPart(part: Part): JsonObject | null {
  if (part === undefined) return null;
  if (typeof part.text === 'string') return { type: 'text', text: part.text };
  const inline = (part.inline_data ?? part.inlineData) as { mime_type?: string; mimeType?: string; data?: string } | undefined;
  if (inline) return { type: 'image_url', image_url: { url: `data:${inline.mime_type ?? inline.mimeType};base64,${inline.data}` } };
  const file = (part.file_data ?? part.fileData) as { file_uri?: string; fileUri?: string } | undefined;
  if (file) return { type: 'image_url', image_url: { url: file.file_uri ?? file.fileUri } };
  return null;
}

const GEMINI_ROLES: Record<string, string> = { human: 'user', model: 'assistant', function: 'tool' };

/** Gemini's generateContent request (Kong's gemini adapter). */
export const geminiNative: NativeFormat = {
  toOpenai(native, path, captures) {
    const { model, operation } = modelAndOperation(path, captures, /\/models\/([^:/]+):([^/]+)$/);
    const contents = Array.isArray(native.contents) ? array(native.contents) : native.contents && typeof native.contents === 'object' ? [native.contents as JsonObject] : [];
    const messages: JsonObject[] = contents.map((c) => {
      const parts = Array.isArray(c.parts) ? array(c.parts) : c.parts && typeof c.parts === 'object' ? [c.parts as JsonObject] : [];
      return { role: GEMINI_ROLES[String(c.role)] ?? c.role, content: parts.map(geminiPart).filter((p) => p !== null) };
    });
    const system = (native.system_instruction ?? native.systemInstruction) as { parts?: unknown } | undefined;
    const systemText = Array.isArray(system?.parts) ? (system.parts as Part[])[0]?.text : (system?.parts as Part)?.text;
    if (typeof systemText === 'string') messages.unshift({ role: 'system', content: [{ type: 'text', text: systemText }] });
    const c = (native.generationConfig ?? {}) as JsonObject;
    return openaiRequest(model, operation === 'streamGenerateContent', messages, { temperature: c.temperature, max_tokens: c.maxOutputTokens, top_p: c.topP, top_k: c.topK, stop: c.stopSequences });
  },
  responseModel: (answer) => (typeof answer.modelVersion === 'string' ? answer.modelVersion : null),
};

function bedrockPart(part: JsonObject): JsonObject | null {
  if (typeof part.text === 'string') return { type: 'text', text: part.text };
  const image = part.image as { format?: string; source?: { bytes?: string } } | undefined;
  if (image) return { type: 'image_url', image_url: { url: `data:image/${image.format};base64,${image.source?.bytes}` } };
  return null;
}

/** Bedrock's Converse request (Kong's bedrock adapter). */
export const bedrockNative: NativeFormat = {
  toOpenai(native, path, captures) {
    const { model, operation } = modelAndOperation(path, captures, /\/model\/([^/]+)\/([^/]+)$/);
    const messages: JsonObject[] = array(native.messages).map((m) => {
      const toolResult = array(m.content).find((p) => p.toolResult !== undefined)?.toolResult as { toolUseId?: string; content?: unknown } | undefined;
      if (toolResult) return { role: 'tool', tool_call_id: toolResult.toolUseId, content: JSON.stringify(toolResult.content) };
      return { role: m.role, content: array(m.content).map(bedrockPart).filter((p) => p !== null) };
    });
    const system = array(native.system)[0]?.text;
    if (typeof system === 'string' && messages.length > 0) messages.unshift({ role: 'system', content: [{ type: 'text', text: system }] });
    const c = (native.inferenceConfig ?? {}) as JsonObject;
    return openaiRequest(model === null ? null : decodeURIComponent(model), operation === 'converse-stream', messages, { temperature: c.temperature, max_tokens: c.maxTokens, top_p: c.topP, stop: c.stopSequences });
  },
  // Bedrock's answer names no model: the request's is logged
  responseModel: () => null,
};

export const NATIVE_FORMATS = { gemini: geminiNative, bedrock: bedrockNative } as const;
