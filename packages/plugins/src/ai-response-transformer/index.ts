import { z } from 'zod';
import { definePlugin } from '../contract';
import { introspect } from '../ai/llm-call';
import { parseObject } from '../ai/openai-format';
import { callOptionsOf, checkTransformerConfig, extractPatternOf, transformerFields } from '../ai/transformer-schema';

export const aiResponseTransformerConfigSchema = z
  .object({ ...transformerFields, parse_llm_response_json_instructions: z.boolean().default(false) })
  .strict();
export type AiResponseTransformerConfig = z.infer<typeof aiResponseTransformerConfigSchema>;

const aiErrorBody = (message: string) => Buffer.from(JSON.stringify({ error: { message } }));

/**
 * The upstream's response body rewritten by a model before the client gets it (Kong's priority 768). With
 * `parse_llm_response_json_instructions` the model answers `{status, headers, body}` and those are sent.
 */
export const aiResponseTransformer = definePlugin<AiResponseTransformerConfig, unknown>({
  name: 'ai-response-transformer',
  priority: 768,
  version: '3.9.0',
  configSchema: aiResponseTransformerConfigSchema,
  checkConfig: checkTransformerConfig,
  auth: false,
  noConsumer: false,
  response(ctx, config, res) {
    res.transformBody(async (body) => {
      const answer = await introspect(config.llm, config.prompt, body.toString('utf8'), extractPatternOf(config), callOptionsOf(config));
      if (typeof answer !== 'string') {
        ctx.runtime.log?.error('ai-response-transformer: the model could not transform the response', { reason: answer.error });
        res.setStatus?.(400);
        res.headers['content-type'] = 'application/json; charset=utf-8';
        return aiErrorBody(answer.error);
      }
      delete res.headers['content-encoding'];
      if (!config.parse_llm_response_json_instructions) return Buffer.from(answer);
      const instructions = parseObject(answer);
      if (instructions === null) {
        res.setStatus?.(500);
        res.headers['content-type'] = 'application/json; charset=utf-8';
        return aiErrorBody('failed to parse JSON response instructions from AI backend: input not table or string');
      }
      res.setStatus?.(typeof instructions.status === 'number' ? instructions.status : 200);
      const headers = instructions.headers;
      if (headers !== null && typeof headers === 'object') for (const [name, value] of Object.entries(headers)) res.headers[name.toLowerCase()] = String(value);
      const replacement = instructions.body ?? instructions;
      return Buffer.from(typeof replacement === 'string' ? replacement : JSON.stringify(replacement));
    });
  },
});
