import { z } from 'zod';

/**
 * A copy of key-auth's config schema for the toolkit's tests: core cannot import @gatehouse/plugins, and the
 * toolkit must work on any plugin schema of this shape.
 */
const HEADER_NAME = /^[A-Za-z0-9_-]+$/;

export const keyAuthConfigMirror = z
  .object({
    key_names: z
      .array(
        z.string().refine((v) => HEADER_NAME.test(v), {
          error: (issue) => `bad header name '${String(issue.input)}', allowed characters are A-Z, a-z, 0-9, '_', and '-'`,
        }),
      )
      .min(1)
      .default(['apikey']),
    hide_credentials: z.boolean().default(false),
    anonymous: z.string().min(1).nullable().default(null),
    key_in_header: z.boolean().default(true),
    key_in_query: z.boolean().default(true),
    key_in_body: z.boolean().default(false),
    run_on_preflight: z.boolean().default(true),
    realm: z.string().nullable().default(null),
  })
  .strict();
