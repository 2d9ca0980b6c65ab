import { z } from 'zod';
import type { PluginContext } from '../contract';
import { aiError, writeAiRequest } from '../ai/llm-request';
import { defineAiPlugin, onAiRequest } from '../ai/ai-plugin';
import { parseObject } from '../ai/openai-format';

export const aiPromptTemplateConfigSchema = z
  .object({
    templates: z.array(z.object({ name: z.string(), template: z.string() }).strict()),
    allow_untemplated_requests: z.boolean().default(true),
    log_original_request: z.boolean().default(false),
    max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
  })
  .strict();
export type AiPromptTemplateConfig = z.infer<typeof aiPromptTemplateConfigSchema>;

const PLACEHOLDER = /\{\{([A-Za-z0-9_]+)\}\}/g;

/** Kong's templater: `{{name}}` replaced by the property's JSON-escaped text; names left unfilled are reported. */
export function renderTemplate(template: string, properties: unknown): string | { error: string } {
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) return { error: 'properties must be an object' };
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(properties)) {
    if (typeof value !== 'string') return { error: `property values must be a string, got ${value === null ? 'nil' : Array.isArray(value) ? 'table' : typeof value === 'object' ? 'table' : typeof value}` };
    values[name] = JSON.stringify(value).slice(1, -1);
  }
  const rendered = template.replace(PLACEHOLDER, (whole, name: string) => (Object.prototype.hasOwnProperty.call(values, name) ? values[name]! : whole));
  const missing = [...new Set([...rendered.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
  if (missing.length > 0) return { error: `missing template parameters: ${missing.map((name) => `[${name}]`).join(', ')}` };
  return rendered;
}

/** With `log_original_request`, the body as the client sent it goes to the log entries' `ai.payload`. */
async function logOriginal(ctx: PluginContext, config: AiPromptTemplateConfig): Promise<void> {
  if (!config.log_original_request) return;
  const raw = await ctx.req.readBody();
  const ai = (ctx.logValues?.get('ai') as Record<string, unknown> | undefined) ?? {};
  ai.payload = { original_request: raw.subarray(0, config.max_request_body_size).toString('utf8') };
  ctx.logValues?.set('ai', ai);
}

const fillTemplate = onAiRequest((ctx, config: AiPromptTemplateConfig, request) => {
  const { messages, prompt } = request;
  if (messages !== undefined && prompt !== undefined) return aiError(400, "cannot run 'messages' and 'prompt' templates at the same time");
  const reference = messages ?? prompt;
  if (reference === undefined) return aiError(400, "only 'llm/v1/chat' and 'llm/v1/completions' formats are supported for templating");
  const name = typeof reference === 'string' && reference.startsWith('{template://') && reference.endsWith('}') ? reference.slice(12, -1) : null;
  if (name === null) return config.allow_untemplated_requests ? undefined : aiError(400, 'this LLM route only supports templated requests');
  const template = config.templates.find((t) => t.name === name);
  if (template === undefined) return aiError(400, `could not find template name [${name}]`);
  const rendered = renderTemplate(template.template, request.properties ?? {});
  if (typeof rendered !== 'string') return aiError(400, rendered.error);
  const body = parseObject(rendered);
  if (body !== null) writeAiRequest(ctx, body);
  else ctx.upstream.setBody(Buffer.from(rendered), 'application/json');
});

/** `{template://name}` in `messages` or `prompt` replaced by a configured template (Kong's priority 773). */
export const aiPromptTemplate = defineAiPlugin<AiPromptTemplateConfig>({
  name: 'ai-prompt-template',
  priority: 773,
  configSchema: aiPromptTemplateConfigSchema,
  async access(ctx, config) {
    await logOriginal(ctx, config);
    return fillTemplate(ctx, config);
  },
});
