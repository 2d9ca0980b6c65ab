import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, tags } from './fields';

export const keySetSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: z.string().min(1).nullable().default(null),
    tags: tags(),
  })
  .strict();
export type KeySet = z.infer<typeof keySetSchema> & { id: string; created_at: number; updated_at: number };

export const keySets = defineEntity({
  name: 'key_sets',
  adminPath: 'key-sets',
  schema: keySetSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [],
  updatedAt: true,
});
