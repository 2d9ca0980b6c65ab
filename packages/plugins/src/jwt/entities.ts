import { createPublicKey } from 'node:crypto';
import { z, baseFields, foreignRef, tags, LONG_TEXT_MAX } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';
import { randomCredentialString } from '../key-auth/entities';

/** Signing algorithms a jwt credential may use (Kong 3.x's list). */
export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** HS* algorithms verify with the shared `secret`; every other one with `rsa_public_key`. */
export function isHmacAlgorithm(algorithm: string): boolean {
  return algorithm.startsWith('HS');
}

export const jwtSecretSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    key: z.string().min(1).nullable().optional(),
    secret: z.string().min(1).nullable().optional(),
    rsa_public_key: z.string().max(LONG_TEXT_MAX).nullable().default(null),
    algorithm: z.enum(JWT_ALGORITHMS).default('HS256'),
    tags: tags(),
  })
  .strict();

/** Whether a PEM holds a key Node can verify with (public key, certificate or private key). */
export function isUsablePublicKey(pem: string): boolean {
  try {
    createPublicKey(pem);
    return true;
  } catch {
    return false;
  }
}

const CONDITIONAL_ON_ALGORITHM = "failed conditional validation given value of field 'algorithm'";

/** Asymmetric algorithms need a public key that parses (Kong's conditional entity check). */
export function checkJwtSecret(entity: Record<string, unknown>): Record<string, string | string[]> | null {
  const algorithm = typeof entity.algorithm === 'string' ? entity.algorithm : 'HS256';
  if (isHmacAlgorithm(algorithm)) return null;
  const pem = entity.rsa_public_key;
  if (typeof pem !== 'string' || pem === '') return { '@entity': [CONDITIONAL_ON_ALGORITHM], rsa_public_key: 'required field missing' };
  if (!isUsablePublicKey(pem)) return { '@entity': [CONDITIONAL_ON_ALGORITHM], rsa_public_key: 'invalid key' };
  return null;
}

/** Fills the generated fields: `key` and `secret`, 32 characters each, when not given. */
export function generateJwtFields(entity: Record<string, unknown>): Record<string, unknown> {
  if (entity.key != null && entity.secret != null) return entity;
  return {
    ...entity,
    key: entity.key ?? randomCredentialString(),
    secret: entity.secret ?? randomCredentialString(),
  };
}

export const jwtSecrets: CredentialEntity = {
  name: 'jwt_secrets',
  adminPath: 'jwts',
  consumerPath: 'jwt',
  schema: jwtSecretSchema,
  endpointKey: 'key',
  uniques: ['key'],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
  check: checkJwtSecret,
  prepare: generateJwtFields,
};
