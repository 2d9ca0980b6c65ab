import { z } from 'zod';
import { definePlugin } from '../contract';
import { aiError } from '../ai/llm-request';
import { introspect } from '../ai/llm-call';
import { callOptionsOf, checkTransformerConfig, extractPatternOf, transformerFields } from '../ai/transformer-schema';

export const aiRequestTransformerConfigSchema = z.object(transformerFields).strict();
export type AiRequestTransformerConfig = z.infer<typeof aiRequestTransformerConfigSchema>;

/** The request body rewritten by a model before it goes upstream (Kong's priority 777): the model's answer replaces it. */
export const aiRequestTransformer = definePlugin<AiRequestTransformerConfig, unknown>({
  name: 'ai-request-transformer',
  priority: 777,
  version: '3.9.0',
  configSchema: aiRequestTransformerConfigSchema,
  checkConfig: checkTransformerConfig,
  auth: false,
  noConsumer: true,
  async access(ctx, config) {
    const body = await ctx.req.readBody();
    const text = body.subarray(0, config.max_request_body_size).toString('utf8');
    const answer = await introspect(config.llm, config.prompt, text, extractPatternOf(config), callOptionsOf(config));
    if (typeof answer !== 'string') return aiError(400, answer.error);
    ctx.upstream.setBody(Buffer.from(answer));
  },
});
