import { z } from 'zod';
import { aiError, writeAiRequest } from '../ai/llm-request';
import { defineAiPlugin, onAiRequest } from '../ai/ai-plugin';

const between = 'length must be at most 500';
const prompt = z
  .object({
    role: z.enum(['system', 'assistant', 'user']).default('system'),
    content: z.string().min(1, 'length must be at least 1').max(500, between),
  })
  .strict();
const prompts = z.array(prompt).max(15, 'length must be at most 15').nullable().default(null);

export const aiPromptDecoratorConfigSchema = z
  .object({
    prompts: z.object({ prepend: prompts, append: prompts }).strict().prefault({}),
    max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
    llm_format: z.enum(['openai', 'bedrock', 'gemini']).default('openai'),
  })
  .strict();
export type AiPromptDecoratorConfig = z.infer<typeof aiPromptDecoratorConfigSchema>;

/** Chat messages added before and after the client's (Kong's priority 772, before ai-proxy). */
export const aiPromptDecorator = defineAiPlugin<AiPromptDecoratorConfig>({
  name: 'ai-prompt-decorator',
  priority: 772,
  configSchema: aiPromptDecoratorConfigSchema,
  checkConfig: (config) =>
    config.prompts.prepend === null && config.prompts.append === null
      ? { '@entity': "at least one of these fields must be non-empty: 'config.prompts.prepend', 'config.prompts.append'" }
      : null,
  access: onAiRequest((ctx, config: AiPromptDecoratorConfig, request) => {
    if (!Array.isArray(request.messages) || request.messages.length < 1) return aiError(400, 'this LLM route only supports llm/chat type requests');
    const copy = (list: AiPromptDecoratorConfig['prompts']['append']) => (list ?? []).map((m) => ({ role: m.role, content: m.content }));
    writeAiRequest(ctx, { ...request, messages: [...copy(config.prompts.prepend), ...(request.messages as unknown[]), ...copy(config.prompts.append)] });
  }),
});
