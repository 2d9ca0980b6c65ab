import { z } from 'zod';
import { settableHeaderName } from '../shared/header-fields';

export const jweDecryptConfigSchema = z
  .object({
    /** key-set names (ids accepted too), searched in this order for the token's kid */
    key_sets: z.array(z.string().min(1)),
    lookup_header_name: z.string().min(1).default('Authorization'),
    forward_header_name: settableHeaderName().min(1).default('Authorization'),
    /** refuse requests without a token (403) instead of passing them through */
    strict: z.boolean().default(true),
  })
  .strict();

export type JweDecryptConfig = z.infer<typeof jweDecryptConfigSchema>;
