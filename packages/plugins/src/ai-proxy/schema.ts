import { z } from 'zod';
import { checkLlmConfig, llmFields } from '../ai/llm-schema';

/** Kong 3.9's ai-proxy config: the shared LLM record plus the proxy's own fields. */
export const aiProxyConfigSchema = z
  .object({
    ...llmFields,
    response_streaming: z.enum(['allow', 'deny', 'always']).default('allow'),
    max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
    model_name_header: z.boolean().default(true),
    llm_format: z.enum(['openai', 'bedrock', 'gemini']).default('openai'),
  })
  .strict();

export type AiProxyConfig = z.infer<typeof aiProxyConfigSchema>;

/** Kong's entity checks for ai-proxy, with its messages. */
export function checkAiProxyConfig(config: AiProxyConfig): Record<string, string> | null {
  const shared = checkLlmConfig(config);
  if (shared !== null) return { '@record': shared };
  if (config.llm_format !== 'openai') {
    if (config.route_type !== 'llm/v1/chat') return { '@entity': "native provider options in llm_format can only be used with the 'llm/v1/chat' route_type" };
    if (config.model.provider !== config.llm_format) return { '@entity': `native llm_format '${config.llm_format}' can only be used with the '${config.llm_format}' model.provider` };
    return { 'llm_format': `native llm_format '${config.llm_format}' is not supported by this gateway` };
  }
  return null;
}
