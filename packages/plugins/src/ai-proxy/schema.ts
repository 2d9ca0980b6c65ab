import { z } from 'zod';
import { authSchema, checkLlmConfig, llmFields, modelSchema } from '../ai/llm-schema';
import { tokenLimitsSchema } from '../ai/token-limits';

/** A provider and model tried when the ones before it answer 429 or 5xx (beyond Kong OSS); `auth` defaults to the plugin's. */
const fallbackSchema = z.object({ model: modelSchema, auth: authSchema.nullable().default(null) }).strict();

/** Kong 3.9's ai-proxy config: the shared LLM record plus the proxy's own fields. */
export const aiProxyConfigSchema = z
  .object({
    ...llmFields,
    response_streaming: z.enum(['allow', 'deny', 'always']).default('allow'),
    max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
    model_name_header: z.boolean().default(true),
    llm_format: z.enum(['openai', 'bedrock', 'gemini']).default('openai'),
    // beyond Kong OSS: tokens per consumer, and the providers tried in order when one fails
    token_limits: tokenLimitsSchema.nullable().default(null),
    fallbacks: z.array(fallbackSchema).max(8, 'length must be at most 8').default([]),
  })
  .strict();

export type AiProxyConfig = z.infer<typeof aiProxyConfigSchema>;

/** Kong's entity checks for ai-proxy, with its messages. */
export function checkAiProxyConfig(config: AiProxyConfig): Record<string, string> | null {
  const shared = checkLlmConfig(config);
  if (shared !== null) return { '@record': shared };
  for (const [i, fallback] of config.fallbacks.entries()) {
    const problem = checkLlmConfig({ ...config, model: fallback.model, auth: fallback.auth ?? config.auth });
    if (problem !== null) return { fallbacks: `fallback ${i + 1}: ${problem}` };
  }
  const limits = config.token_limits;
  if (limits !== null && limits.minute === null && limits.hour === null && limits.day === null) {
    return { token_limits: "at least one of these fields must be non-empty: 'minute', 'hour', 'day'" };
  }
  if (config.llm_format !== 'openai') {
    if (config.route_type !== 'llm/v1/chat') return { '@entity': "native provider options in llm_format can only be used with the 'llm/v1/chat' route_type" };
    if (config.model.provider !== config.llm_format) return { '@entity': `native llm_format '${config.llm_format}' can only be used with the '${config.llm_format}' model.provider` };
    if (config.fallbacks.some((f) => f.model.provider !== config.llm_format)) return { fallbacks: `with native llm_format '${config.llm_format}', every fallback must use the '${config.llm_format}' model.provider` };
  }
  return null;
}
