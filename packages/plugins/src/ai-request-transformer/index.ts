import { z } from 'zod';
import { aiError } from '../ai/llm-request';
import { askModel, checkTransformerConfig, transformerFields } from '../ai/transformer-schema';
import { defineAiPlugin } from '../ai/ai-plugin';
import { httpClients } from '../shared/http-clients';

export const aiRequestTransformerConfigSchema = z.object(transformerFields).strict();
export type AiRequestTransformerConfig = z.infer<typeof aiRequestTransformerConfigSchema>;

const clients = httpClients();

/** The request body rewritten by a model before it goes upstream (Kong's priority 777): the model's answer replaces it. */
export const aiRequestTransformer = defineAiPlugin<AiRequestTransformerConfig>({
  name: 'ai-request-transformer',
  priority: 777,
  configSchema: aiRequestTransformerConfigSchema,
  checkConfig: checkTransformerConfig,
  noConsumer: true,
  init: clients.init,
  async access(ctx, config) {
    const body = await ctx.req.readBody();
    const text = body.subarray(0, config.max_request_body_size).toString('utf8');
    const answer = await askModel(config, text, clients.of(ctx.runtime), ctx.spans ?? null);
    if (typeof answer !== 'string') return aiError(400, answer.error);
    ctx.upstream.setBody(Buffer.from(answer));
  },
});
