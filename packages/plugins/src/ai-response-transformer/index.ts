import { z } from 'zod';
import { parseObject } from '../ai/openai-format';
import { askModel, checkTransformerConfig, transformerFields } from '../ai/transformer-schema';
import { defineAiPlugin } from '../ai/ai-plugin';
import { httpClients } from '../shared/http-clients';

export const aiResponseTransformerConfigSchema = z
  .object({ ...transformerFields, parse_llm_response_json_instructions: z.boolean().default(false) })
  .strict();
export type AiResponseTransformerConfig = z.infer<typeof aiResponseTransformerConfigSchema>;

const clients = httpClients();
const aiErrorBody = (message: string) => Buffer.from(JSON.stringify({ error: { message } }));

/**
 * The upstream's response body rewritten by a model before the client gets it (Kong's priority 768). With
 * `parse_llm_response_json_instructions` the model answers `{status, headers, body}` and those are sent.
 */
export const aiResponseTransformer = defineAiPlugin<AiResponseTransformerConfig>({
  name: 'ai-response-transformer',
  priority: 768,
  configSchema: aiResponseTransformerConfigSchema,
  checkConfig: checkTransformerConfig,
  init: clients.init,
  response(ctx, config, res) {
    res.transformBody(async (body) => {
      const answer = await askModel(config, body.toString('utf8'), clients.of(ctx.runtime), ctx.spans ?? null);
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
