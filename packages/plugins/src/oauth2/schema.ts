import { z } from 'zod';
import { randomCredentialString } from '../key-auth/entities';

export const PKCE_MODES = ['lax', 'strict', 'none'] as const;

export const oauth2ConfigSchema = z
  .object({
    scopes: z.array(z.string()).nullable().default(null),
    mandatory_scope: z.boolean().default(false),
    // generated once by the control plane when the plugin is created, then stored with the config
    provision_key: z
      .string()
      .min(1)
      .default(() => randomCredentialString())
      .meta({ kong: { auto: true, unique: true, default: undefined } }),
    token_expiration: z.number().min(0).default(7200),
    enable_authorization_code: z.boolean().default(false),
    enable_implicit_grant: z.boolean().default(false),
    enable_client_credentials: z.boolean().default(false),
    enable_password_grant: z.boolean().default(false),
    hide_credentials: z.boolean().default(false),
    accept_http_if_already_terminated: z.boolean().default(false),
    anonymous: z.string().min(1).nullable().default(null),
    global_credentials: z.boolean().default(false),
    auth_header_name: z.string().min(1).default('authorization'),
    refresh_token_ttl: z.number().min(0).max(100000000).default(1209600),
    reuse_refresh_token: z.boolean().default(false),
    pkce: z.enum(PKCE_MODES).default('lax'),
    realm: z.string().nullable().default(null),
  })
  .strict();

export type OAuth2Config = z.infer<typeof oauth2ConfigSchema>;

const FLOWS = ['enable_authorization_code', 'enable_implicit_grant', 'enable_client_credentials', 'enable_password_grant'] as const;

/** Kong's entity checks: at least one grant flow, and a mandatory scope needs the list of scopes. */
export function checkOAuth2Config(config: OAuth2Config): Record<string, string | string[]> | null {
  const errors: Record<string, string | string[]> = {};
  if (!FLOWS.some((flow) => config[flow] === true)) {
    errors['@entity'] = [`at least one of these fields must be true: ${FLOWS.join(', ')}`];
  }
  if (config.mandatory_scope && (config.scopes === null || config.scopes.length === 0)) {
    errors['@entity'] = [...((errors['@entity'] as string[] | undefined) ?? []), "failed conditional validation given value of field 'config.mandatory_scope'"];
    errors.scopes = 'required field missing';
  }
  return Object.keys(errors).length > 0 ? errors : null;
}
