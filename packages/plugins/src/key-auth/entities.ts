import { randomBytes } from 'node:crypto';
import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 32 characters from [A-Za-z0-9], Kong's generated credential format. */
export function randomCredentialString(length = 32): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const b = bytes[i]!;
    if (b < 248) out += ALPHANUM[b % 62];
  }
  return out.length === length ? out : randomCredentialString(length);
}

export const keyAuthCredentialSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    key: z.string().min(1).optional(),
    tags: tags(),
    ttl: z.number().int().min(0).max(100000000).nullable().optional(),
  })
  .strict();

export const keyAuthCredentials: CredentialEntity = {
  name: 'keyauth_credentials',
  adminPath: 'key-auths',
  consumerPath: 'key-auth',
  schema: keyAuthCredentialSchema,
  endpointKey: 'key',
  uniques: ['key'],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
  hasTtl: true,
  prepare: (entity) => (entity.key == null ? { ...entity, key: randomCredentialString() } : entity),
};
