import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';
import { randomCredentialString } from '../key-auth/entities';
import { hashSecret, isHashedSecret } from './secret';

export const OAUTH2_CLIENT_TYPES = ['confidential', 'public'] as const;

/** Kong's rule for a redirect URI: absolute (scheme and host), no fragment. */
function redirectUriProblem(uri: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return `cannot parse '${uri}'`;
  }
  if (parsed.host === '' || parsed.protocol === ':') return `cannot parse '${uri}'`;
  if (uri.includes('#')) return `fragment not allowed in '${uri}'`;
  return null;
}

const redirectUri = z.string().superRefine((uri, ctx) => {
  const problem = redirectUriProblem(uri);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const oauth2CredentialSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    name: z.string().min(1),
    client_id: z.string().min(1).nullable().optional(),
    client_secret: z.string().min(1).nullable().optional(),
    hash_secret: z.boolean().default(false),
    redirect_uris: z.array(redirectUri).nullable().default(null),
    tags: tags(),
    client_type: z.enum(OAUTH2_CLIENT_TYPES).default('confidential'),
  })
  .strict();

/**
 * Generates `client_id` and `client_secret` (32 characters each) when not given. With `hash_secret` the secret is
 * stored (and therefore returned by the admin API, from the create response on) only as a hash, as Kong does: a client
 * that wants a hashed secret it can use should send its own `client_secret`. A value that already is a hash (a config
 * dump applied again, or the stored hash coming back on an update) is kept.
 */
export async function prepareOAuth2Credential(entity: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...entity };
  if (out.client_id == null) out.client_id = randomCredentialString();
  if (out.client_secret == null) out.client_secret = randomCredentialString();
  if (out.hash_secret === true && !isHashedSecret(out.client_secret)) out.client_secret = await hashSecret(out.client_secret as string);
  return out;
}

export const oauth2Credentials: CredentialEntity = {
  name: 'oauth2_credentials',
  adminPath: 'oauth2',
  consumerPath: 'oauth2',
  schema: oauth2CredentialSchema,
  endpointKey: 'client_id',
  uniques: ['client_id'],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
  prepare: prepareOAuth2Credential,
};
