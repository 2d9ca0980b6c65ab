import { z } from 'zod';

/** Registered claims the plugin can check. */
export const JWT_VERIFIABLE_CLAIMS = ['exp', 'nbf'] as const;

export const jwtConfigSchema = z
  .object({
    uri_param_names: z.array(z.string()).default(['jwt']),
    cookie_names: z.array(z.string()).default([]),
    header_names: z.array(z.string()).default(['authorization']),
    key_claim_name: z.string().default('iss'),
    secret_is_base64: z.boolean().default(false),
    claims_to_verify: z.array(z.enum(JWT_VERIFIABLE_CLAIMS)).nullable().default(null),
    anonymous: z.string().min(1).nullable().default(null),
    run_on_preflight: z.boolean().default(true),
    maximum_expiration: z.number().min(0).max(31536000).default(0),
    realm: z.string().nullable().default(null),
  })
  .strict();

export type JwtConfig = z.infer<typeof jwtConfigSchema>;

/** Kong's conditional check: a maximum expiration only makes sense when `exp` is verified. */
export function checkJwtConfig(config: JwtConfig): Record<string, string | string[]> | null {
  if (config.maximum_expiration > 0 && !(config.claims_to_verify ?? []).includes('exp')) {
    return {
      '@entity': ["failed conditional validation given value of field 'config.maximum_expiration'"],
      claims_to_verify: 'expected to contain: exp',
    };
  }
  return null;
}
