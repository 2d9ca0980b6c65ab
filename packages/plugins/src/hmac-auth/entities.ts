import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';
import { randomCredentialString } from '../key-auth/entities';

export const hmacAuthCredentialSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    username: z.string().min(1),
    secret: z.string().min(1).nullable().optional(),
    tags: tags(),
  })
  .strict();

/** The secret is generated (32 characters) when not given; it is stored as given, since signing needs it. */
export function generateHmacSecret(entity: Record<string, unknown>): Record<string, unknown> {
  return entity.secret == null ? { ...entity, secret: randomCredentialString() } : entity;
}

export const hmacAuthCredentials: CredentialEntity = {
  name: 'hmacauth_credentials',
  adminPath: 'hmac-auths',
  consumerPath: 'hmac-auth',
  schema: hmacAuthCredentialSchema,
  endpointKey: 'username',
  uniques: ['username'],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
  prepare: generateHmacSecret,
};
