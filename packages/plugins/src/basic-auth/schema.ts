import { z } from 'zod';

export const basicAuthConfigSchema = z
  .object({
    anonymous: z.string().min(1).nullable().default(null),
    hide_credentials: z.boolean().default(false),
    realm: z.string().min(1).default('service'),
  })
  .strict();

export type BasicAuthConfig = z.infer<typeof basicAuthConfigSchema>;
