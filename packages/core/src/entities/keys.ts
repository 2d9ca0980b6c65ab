import { z } from 'zod';
import type { FieldErrors } from '../errors';
import { LONG_TEXT_MAX } from '../schema/input-bounds';
import { defineEntity } from './definition';
import { JWK_PRIVATE_MEMBERS } from './private-fields';
import { baseFieldsWithUpdate, nullableForeign, tags } from './fields';

const pemText = () => z.string().min(1).max(LONG_TEXT_MAX).nullable().default(null);

export const keyPemSchema = z
  .object({
    private_key: pemText(),
    public_key: pemText(),
  })
  .strict();

export const keySchema = z
  .object({
    ...baseFieldsWithUpdate,
    set: nullableForeign(),
    name: z.string().min(1).nullable().default(null),
    kid: z.string().min(1),
    /** the JWK as a JSON string, as Kong stores it */
    jwk: z.string().min(1).max(LONG_TEXT_MAX).nullable().default(null),
    pem: keyPemSchema.nullable().default(null),
    tags: tags(),
  })
  .strict();
export type Key = z.infer<typeof keySchema> & { id: string; created_at: number; updated_at: number };

export const KEY_FORMAT_MISSING = "at least one of these fields must be non-empty: 'jwk', 'pem'";
export const KEY_FORMAT_BOTH = "only one or none of these fields must be set: 'jwk', 'pem'";

/** Kong's `at_least_one_of` + `mutually_exclusive` on (jwk, pem); loading the material is the control plane's job. */
export function checkKeyFormat(e: Record<string, unknown>): FieldErrors | null {
  const hasJwk = e.jwk != null;
  const hasPem = e.pem != null;
  if (!hasJwk && !hasPem) return { '@entity': [KEY_FORMAT_MISSING] };
  if (hasJwk && hasPem) return { '@entity': [KEY_FORMAT_BOTH] };
  return null;
}

export const keys = defineEntity({
  name: 'keys',
  adminPath: 'keys',
  schema: keySchema,
  endpointKey: 'name',
  uniques: ['name'],
  compositeUniques: [['kid', 'set']],
  foreignKeys: [{ field: 'set', entity: 'key_sets', onDelete: 'cascade', required: false }],
  updatedAt: true,
  check: checkKeyFormat,
  privateFields: [{ path: 'jwk', jwkMembers: JWK_PRIVATE_MEMBERS }, { path: 'pem.private_key' }],
});
