import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';
import { BCRYPT_HASH, hashPassword as bcryptHash, PASSWORD_COST } from './password';

export { PASSWORD_COST };

export const basicAuthCredentialSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    username: z.string().min(1),
    password: z.string().min(1),
    tags: tags(),
  })
  .strict();

/**
 * Turns a given password into its bcrypt hash (`$2b$`, native bcrypt on the thread pool); only the hash is stored (and returned by the admin API). A value that
 * is already a bcrypt hash, or the stored hash itself coming back on an update, is kept as it is, so a config dump
 * can be applied again without locking its users out.
 */
export async function hashPassword(entity: Record<string, unknown>, previous: Record<string, unknown> | null): Promise<Record<string, unknown>> {
  const password = entity.password;
  if (typeof password !== 'string' || password === '') return entity;
  if (previous && password === previous.password) return entity;
  if (BCRYPT_HASH.test(password)) return entity;
  return { ...entity, password: await bcryptHash(password, PASSWORD_COST) };
}

export const basicAuthCredentials: CredentialEntity = {
  name: 'basicauth_credentials',
  adminPath: 'basic-auths',
  consumerPath: 'basic-auth',
  schema: basicAuthCredentialSchema,
  endpointKey: 'username',
  uniques: ['username'],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
  prepare: hashPassword,
};
