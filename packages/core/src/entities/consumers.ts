import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, tags } from './fields';

export const consumerSchema = z
  .object({
    ...baseFieldsWithUpdate,
    username: z.string().min(1).nullable().default(null),
    custom_id: z.string().min(1).nullable().default(null),
    tags: tags(),
  })
  .strict();
export type Consumer = z.infer<typeof consumerSchema> & { id: string; created_at: number; updated_at: number };

export const consumers = defineEntity({
  name: 'consumers',
  adminPath: 'consumers',
  schema: consumerSchema,
  endpointKey: 'username',
  uniques: ['username', 'custom_id'],
  foreignKeys: [],
  updatedAt: true,
  check: (e) =>
    e.username == null && e.custom_id == null
      ? { '@entity': ["at least one of these fields must be non-empty: 'custom_id', 'username'"] }
      : null,
});
