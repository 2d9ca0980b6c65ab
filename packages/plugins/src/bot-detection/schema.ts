import { linearRegexError } from '@gatehouse/core';
import { z } from 'zod';

/** A user-agent pattern; it must compile on the linear-time engine (kong-reference decision 17). */
const userAgentPattern = z.string().refine((value) => linearRegexError(value) === null, { error: (issue) => `not a valid regex: ${String(issue.input)}` });

/** Kong 3.9 `bot-detection`: patterns to let through and to refuse, besides the built-in bot list. */
export const botDetectionConfigSchema = z
  .object({
    allow: z.array(userAgentPattern).default([]),
    deny: z.array(userAgentPattern).default([]),
  })
  .strict();

export type BotDetectionConfig = z.infer<typeof botDetectionConfigSchema>;
