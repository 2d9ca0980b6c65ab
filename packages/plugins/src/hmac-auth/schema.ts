import { z } from 'zod';

export const HMAC_ALGORITHMS = ['hmac-sha1', 'hmac-sha256', 'hmac-sha384', 'hmac-sha512'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];

export const hmacAuthConfigSchema = z
  .object({
    hide_credentials: z.boolean().default(false),
    clock_skew: z.number().positive().default(300),
    anonymous: z.string().min(1).nullable().default(null),
    validate_request_body: z.boolean().default(false),
    enforce_headers: z.array(z.string()).default([]),
    algorithms: z.array(z.enum(HMAC_ALGORITHMS)).default([...HMAC_ALGORITHMS]),
    realm: z.string().nullable().default(null),
  })
  .strict();

export type HmacAuthConfig = z.infer<typeof hmacAuthConfigSchema>;
