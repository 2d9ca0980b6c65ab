import type { LlmAuth, LlmConfig, LlmModel, LlmProvider, RouteType } from './llm-schema';
import type { EventFramer } from './sse';
import { anthropicFormat } from './anthropic-format';
import { openaiFormat } from './openai-format';
import { cohereFormat } from './cohere-format';
import { ollamaFormat } from './ollama-format';
import { geminiFormat, geminiServiceAccountFormat } from './gemini-format';
import { bedrockFormat, bedrockUrl } from './bedrock-format';
import { huggingfaceFormat, huggingfaceUrl } from './huggingface-format';
import { llama2RawFormat } from './llama2-raw-format';

export type JsonObject = Record<string, unknown>;

/** Token counts a provider reported, in OpenAI's names. */
export interface LlmUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** One server-sent event as the provider sent it. */
export interface StreamEvent {
  event: string | null;
  data: string;
}

/** What one provider event becomes for the client: an OpenAI chunk (JSON text), the end marker, usage, or nothing. */
export interface TranslatedEvent {
  data?: string;
  done?: boolean;
  usage?: LlmUsage;
}

/** Translation between the OpenAI format the client speaks and one provider's wire format (Kong's LLM drivers). */
export interface ProviderFormat {
  /** the request body for the provider, or an error message (answered 400) */
  toProvider(request: JsonObject, model: LlmModel, routeType: Exclude<RouteType, 'preserve'>): JsonObject | string;
  /** the provider's success body in OpenAI's format (JSON text), or an error message (answered 500) */
  fromProvider(body: string, routeType: Exclude<RouteType, 'preserve'>): { body: string } | { error: string };
  /** one streamed event translated; `state` lives for one response */
  fromStreamEvent(event: StreamEvent, model: LlmModel, state: Map<string, unknown>): TranslatedEvent | { error: string };
  /** request headers the provider needs besides authentication */
  headers?(model: LlmModel): Record<string, string>;
  /** how a streamed answer is cut into events; server-sent events (or JSON lines) when absent */
  framer?(): EventFramer;
  /** signs the finished request (AWS Signature Version 4): the headers to send, or why it cannot be signed */
  sign?(request: { url: URL; method: string; headers: Record<string, string>; body: string }, model: LlmModel, auth: LlmAuth): Promise<Record<string, string> | string>;
}

/** Default origins and operation paths, per provider and route type (Kong's `upstream_url_format` / `operation_map`). */
const OPERATIONS: Partial<Record<LlmProvider, { origin: string; paths: Partial<Record<Exclude<RouteType, 'preserve'>, string>> }>> = {
  openai: { origin: 'https://api.openai.com:443', paths: { 'llm/v1/chat': '/v1/chat/completions', 'llm/v1/completions': '/v1/completions' } },
  anthropic: { origin: 'https://api.anthropic.com:443', paths: { 'llm/v1/chat': '/v1/messages', 'llm/v1/completions': '/v1/complete' } },
  mistral: { origin: 'https://api.mistral.ai:443', paths: { 'llm/v1/chat': '/v1/chat/completions' } },
  cohere: { origin: 'https://api.cohere.com:443', paths: { 'llm/v1/chat': '/v1/chat', 'llm/v1/completions': '/v1/generate' } },
  azure: { origin: 'https://%s.openai.azure.com:443', paths: { 'llm/v1/chat': '/chat/completions', 'llm/v1/completions': '/completions' } },
};

/** The providers translated today; the others answer 400 naming the provider. */
export function formatOf(config: LlmConfig): ProviderFormat | string {
  const { provider, options } = config.model;
  if (provider === 'openai' || provider === 'azure') return openaiFormat;
  if (provider === 'mistral' && options.mistral_format === 'openai') return openaiFormat;
  if (provider === 'llama2' && options.llama2_format === 'openai') return openaiFormat;
  if (provider === 'anthropic') return anthropicFormat;
  if (provider === 'cohere') return cohereFormat;
  if (provider === 'bedrock') return bedrockFormat;
  if (provider === 'huggingface') return huggingfaceFormat;
  if (provider === 'llama2' && options.llama2_format === 'raw') return llama2RawFormat;
  if (provider === 'gemini') return config.auth.gcp_use_service_account ? geminiServiceAccountFormat : geminiFormat;
  if ((provider === 'mistral' && options.mistral_format === 'ollama') || (provider === 'llama2' && options.llama2_format === 'ollama')) return ollamaFormat;
  return `provider ${provider}${provider === 'mistral' || provider === 'llama2' ? ` with format ${String(options.mistral_format ?? options.llama2_format)}` : ''} is not supported by this gateway`;
}

/**
 * Where the request goes: `model.options.upstream_url` as given, or the provider's origin with the route type's path
 * (`upstream_path` overriding it); Azure's instance, deployment and `api-version` fill its URL.
 */
export function providerUrl(config: LlmConfig, routeType: RouteType, stream = false): URL | null {
  const { provider, options } = config.model;
  if (provider === 'gemini') return geminiUrl(config, stream);
  if (provider === 'bedrock') return bedrockUrl(config.model, stream);
  if (provider === 'huggingface') return huggingfaceUrl(options.upstream_url, config.model.name, routeType);
  if (options.upstream_url !== null) return new URL(options.upstream_url);
  const operation = OPERATIONS[provider];
  if (operation === undefined) return null;
  const path = options.upstream_path ?? (routeType === 'preserve' ? null : operation.paths[routeType]) ?? '/';
  if (provider === 'azure') {
    const url = new URL(`${operation.origin.replace('%s', options.azure_instance ?? '')}/openai/deployments/${options.azure_deployment_id ?? ''}${path}`);
    url.searchParams.set('api-version', options.azure_api_version ?? '2023-05-15');
    return url;
  }
  return new URL(`${operation.origin}${path}`);
}

/**
 * Gemini's operation URL: `generateContent`, or `streamGenerateContent` as server-sent events (`alt=sse`) when
 * streaming; on Vertex AI (`model.options.gemini` with endpoint, project and location) its regional path.
 */
function geminiUrl(config: LlmConfig, stream: boolean): URL {
  const { name, options } = config.model;
  const operation = stream ? 'streamGenerateContent' : 'generateContent';
  const vertex = options.gemini;
  let url: URL;
  if (options.upstream_url !== null) url = new URL(options.upstream_url);
  else if (vertex?.api_endpoint && vertex.project_id && vertex.location_id) {
    url = new URL(`https://${vertex.api_endpoint}/v1/projects/${vertex.project_id}/locations/${vertex.location_id}/publishers/google/models/${name ?? ''}:${operation}`);
  } else url = new URL(`https://generativelanguage.googleapis.com/v1beta/models/${name ?? ''}:${operation}`);
  if (stream) url.searchParams.set('alt', 'sse');
  return url;
}
