import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity, PrepareOptions } from '../contract';
import { BCRYPT_HASH, hashPassword as bcryptHash, PASSWORD_COST, verifyPassword } from './password';

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
 * can be applied again without locking its users out. With `_transform: false` the value is kept as given: Kong's
 * stored digest (SHA-1 of the password followed by the consumer id, in hex), checked by verifyPassword.
 */
export async function hashPassword(entity: Record<string, unknown>, previous: Record<string, unknown> | null, options: PrepareOptions = {}): Promise<Record<string, unknown>> {
  const password = entity.password;
  if (typeof password !== 'string' || password === '') return entity;
  // Kong's export (`_transform: false`): the password is already Kong's stored digest, which verifies as Kong's does
  if (options.transform === false) return entity;
  if (previous && password === previous.password) return entity;
  if (BCRYPT_HASH.test(password)) return entity;
  // the same password applied again (a declarative document): the stored hash stays, so nothing changed
  if (previous && typeof previous.password === 'string' && BCRYPT_HASH.test(previous.password) && (await verifyPassword(password, previous.password))) {
    return { ...entity, password: previous.password };
  }
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
