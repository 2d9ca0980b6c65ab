import { z } from 'zod';
import { colonPairs, names } from '../shared/colon-pairs';
import { settableHeaderPairs, settableHeaderRenames } from '../shared/header-fields';

/** A section's `headers`: names to remove, `old:new` renames, or `name:value` pairs; framing headers are never set. */
const headerField = (kind: 'names' | 'renames' | 'pairs') => (kind === 'names' ? names() : kind === 'renames' ? settableHeaderRenames() : settableHeaderPairs());

const section = (kind: 'names' | 'renames' | 'pairs') =>
  z
    .object({
      body: kind === 'names' ? names() : colonPairs(),
      headers: headerField(kind),
      querystring: kind === 'names' ? names() : colonPairs(),
    })
    .strict();

export const requestTransformerConfigSchema = z
  .object({
    http_method: z
      .string()
      .regex(/^[A-Z]+$/, { error: "invalid value: should be an uppercase HTTP method" })
      .nullable()
      .default(null),
    remove: section('names').prefault({}),
    rename: section('renames').prefault({}),
    replace: section('pairs')
      .extend({ uri: z.string().nullable().default(null) })
      .prefault({}),
    add: section('pairs').prefault({}),
    append: section('pairs').prefault({}),
  })
  .strict();

export type RequestTransformerConfig = z.infer<typeof requestTransformerConfigSchema>;
