import { z } from 'zod';
import { colonPairs, names } from '../shared/colon-pairs';

const jsonTypes = () => z.array(z.enum(['boolean', 'number', 'string'])).default([]);

const named = () => z.object({ json: names(), headers: names() }).strict().prefault({});
const paired = () => z.object({ json: colonPairs(), headers: colonPairs() }).strict().prefault({});
const typed = () => z.object({ json: colonPairs(), json_types: jsonTypes(), headers: colonPairs() }).strict().prefault({});

export const responseTransformerConfigSchema = z
  .object({
    remove: named(),
    rename: paired(),
    replace: typed(),
    add: typed(),
    append: typed(),
  })
  .strict();

export type ResponseTransformerConfig = z.infer<typeof responseTransformerConfigSchema>;
