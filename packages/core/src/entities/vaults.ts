import { z } from 'zod';
import { BUNDLED_VAULTS } from '../tls/vault-reference';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, tags } from './fields';

/** The `env` vault's configuration (Kong's): an optional prefix put before the upper-cased secret name. */
export const envVaultConfigSchema = z
  .object({
    prefix: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid value')
      .nullable()
      .default(null),
    ttl: z.number().int().min(0).nullable().default(null),
    neg_ttl: z.number().int().min(0).nullable().default(null),
    resurrect_ttl: z.number().int().min(0).nullable().default(null),
  })
  .strict();

export const vaultSchema = z
  .object({
    ...baseFieldsWithUpdate,
    prefix: z
      .string()
      .max(1024)
      .regex(/^[a-z][a-z0-9-]*[a-z0-9]$/, 'invalid value')
      .refine((p) => !(BUNDLED_VAULTS as readonly string[]).includes(p), `must not be one of: ${BUNDLED_VAULTS.join(', ')}`),
    name: z.string().min(1).max(1024),
    description: z.string().max(1024).nullable().default(null),
    config: envVaultConfigSchema.default({ prefix: null, ttl: null, neg_ttl: null, resurrect_ttl: null }),
    tags: tags(),
  })
  .strict();
export type Vault = z.infer<typeof vaultSchema> & { id: string; created_at: number; updated_at: number };

export const vaults = defineEntity({
  name: 'vaults',
  adminPath: 'vaults',
  schema: vaultSchema,
  endpointKey: 'prefix',
  uniques: ['prefix'],
  foreignKeys: [],
  updatedAt: true,
  check: (e) => ((BUNDLED_VAULTS as readonly string[]).includes(String(e.name)) ? null : { name: `vault '${String(e.name)}' is not installed` }),
});
