import { z } from 'zod';

export const SIZE_UNITS = { megabytes: 1024 * 1024, kilobytes: 1024, bytes: 1 } as const;

export const requestSizeLimitingConfigSchema = z
  .object({
    allowed_payload_size: z.number().int().default(128),
    size_unit: z.enum(['megabytes', 'kilobytes', 'bytes']).default('megabytes'),
    require_content_length: z.boolean().default(false),
  })
  .strict();

export type RequestSizeLimitingConfig = z.infer<typeof requestSizeLimitingConfigSchema>;
