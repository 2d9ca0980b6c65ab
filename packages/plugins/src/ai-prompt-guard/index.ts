import { z } from 'zod';
import { compileLinearRegex, linearRegexError, type LinearRegex } from '@gatehouse/core';
import { aiError } from '../ai/llm-request';
import { defineAiPlugin, onAiRequest } from '../ai/ai-plugin';
import type { JsonObject } from '../ai/providers';

const pattern = z
  .string()
  .min(1, 'length must be at least 1')
  .max(500, 'length must be at most 500')
  .superRefine((source, ctx) => {
    const error = linearRegexError(source);
    if (error !== null) ctx.addIssue({ code: 'custom', message: error });
  });
const patterns = z.array(pattern).max(10, 'length must be at most 10').nullable().default(null);

export const aiPromptGuardConfigSchema = z
  .object({
    allow_patterns: patterns,
    deny_patterns: patterns,
    allow_all_conversation_history: z.boolean().default(false),
    max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
    match_all_roles: z.boolean().default(false),
    llm_format: z.enum(['openai', 'bedrock', 'gemini']).default('openai'),
  })
  .strict();
export type AiPromptGuardConfig = z.infer<typeof aiPromptGuardConfigSchema>;

const BAD_FORMAT = 'ai-prompt-guard only supports llm/v1/chat or llm/v1/completions prompts';

/** The prompt text the patterns see: user messages newest first (every role with `match_all_roles`), or the prompt. */
export function collectPrompts(request: JsonObject, config: AiPromptGuardConfig): string | { error: string } {
  if (Array.isArray(request.messages)) {
    const parts: string[] = [];
    for (let i = request.messages.length - 1; i >= 0; i--) {
      const message = request.messages[i] as { role?: unknown; content?: unknown };
      if (typeof message.role !== 'string') return { error: BAD_FORMAT };
      if (message.role !== 'user' && !config.match_all_roles) continue;
      if (typeof message.content !== 'string') return { error: BAD_FORMAT };
      parts.push(message.content);
      if (config.allow_all_conversation_history) break;
    }
    return parts.join(' ');
  }
  if (typeof request.prompt === 'string') return request.prompt;
  return { error: BAD_FORMAT };
}

const compiled = new WeakMap<readonly string[], LinearRegex[]>();
function regexes(list: readonly string[]): LinearRegex[] {
  let out = compiled.get(list);
  if (out === undefined) compiled.set(list, (out = list.map((source) => compileLinearRegex(source))));
  return out;
}

/** Allow and deny patterns over the prompts, in linear time (Kong's priority 771); a refusal says only "bad request". */
export const aiPromptGuard = defineAiPlugin<AiPromptGuardConfig>({
  name: 'ai-prompt-guard',
  priority: 771,
  configSchema: aiPromptGuardConfigSchema,
  checkConfig(config): Record<string, string> | null {
    if (config.allow_patterns === null && config.deny_patterns === null) {
      return { '@entity': "at least one of these fields must be non-empty: 'config.allow_patterns', 'config.deny_patterns'" };
    }
    if (config.match_all_roles && config.allow_all_conversation_history) {
      return { '@entity': "failed conditional validation given value of field 'config.match_all_roles'", allow_all_conversation_history: 'value must be false' };
    }
    return null;
  },
  access: onAiRequest((_ctx, config: AiPromptGuardConfig, request) => {
    const prompts = collectPrompts(request, config);
    if (typeof prompts !== 'string') return aiError(400, 'bad request');
    if (config.deny_patterns !== null && regexes(config.deny_patterns).some((re) => re.test(prompts))) return aiError(400, 'bad request');
    if (config.allow_patterns === null || config.allow_patterns.length === 0) return;
    if (!regexes(config.allow_patterns).some((re) => re.test(prompts))) return aiError(400, 'bad request');
  }),
});
