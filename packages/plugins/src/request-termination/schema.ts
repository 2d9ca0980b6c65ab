import { z } from 'zod';
import { LONG_TEXT_MAX } from '@gatehouse/core';

const HEADER_NAME = /^[A-Za-z0-9_-]+$/;

export const requestTerminationConfigSchema = z
  .object({
    status_code: z.number().int().min(100, 'value should be between 100 and 599').max(599, 'value should be between 100 and 599').default(503),
    message: z.string().nullable().default(null),
    content_type: z.string().nullable().default(null),
    body: z.string().max(LONG_TEXT_MAX).nullable().default(null),
    echo: z.boolean().default(false),
    trigger: z
      .string()
      .refine((v) => HEADER_NAME.test(v), {
        error: (issue) => `bad header name '${String(issue.input)}', allowed characters are A-Z, a-z, 0-9, '_', and '-'`,
      })
      .nullable()
      .default(null),
  })
  .strict();

export type RequestTerminationConfig = z.infer<typeof requestTerminationConfigSchema>;

/** Kong's cross-field rules, with its messages. */
export function checkRequestTerminationConfig(config: RequestTerminationConfig): Record<string, string> | null {
  if (config.message != null && (config.content_type != null || config.body != null)) {
    return { '@config': 'message cannot be used with content_type or body' };
  }
  if (config.content_type != null && config.body == null) return { '@config': 'content_type requires a body' };
  if (config.echo && (config.content_type != null || config.body != null)) {
    return { '@config': 'echo cannot be used with content_type and body' };
  }
  return null;
}
