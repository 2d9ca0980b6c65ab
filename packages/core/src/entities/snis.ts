import { z } from 'zod';
import { sniNameProblem } from '../tls/sni-name';
import { defineEntity } from './definition';
import { baseFields, foreignRef, tags } from './fields';

/** Kong's `wildcard_host`: one `*`, leftmost or rightmost; no IP, no port. */
export const sniName = () =>
  z
    .string()
    .min(1)
    .max(1024)
    .superRefine((name, ctx) => {
      const problem = sniNameProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

export const sniSchema = z
  .object({
    ...baseFields,
    name: sniName(),
    tags: tags(),
    certificate: foreignRef(),
  })
  .strict();
export type Sni = z.infer<typeof sniSchema> & { id: string; created_at: number };

export const snis = defineEntity({
  name: 'snis',
  adminPath: 'snis',
  schema: sniSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [{ field: 'certificate', entity: 'certificates', onDelete: 'cascade', required: true }],
  updatedAt: false,
});
