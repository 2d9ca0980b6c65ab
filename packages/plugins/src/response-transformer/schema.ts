import { z } from 'zod';
import { colonPairs, names } from '../shared/colon-pairs';
import { settableHeaderPairs, settableHeaderRenames } from '../shared/header-fields';

const jsonTypes = () => z.array(z.enum(['boolean', 'number', 'string'])).default([]);

const named = () => z.object({ json: names(), headers: names() }).strict().prefault({});
// framing headers are never set (settableHeader*): renamed to, replaced, added or appended
const paired = () => z.object({ json: colonPairs(), headers: settableHeaderRenames() }).strict().prefault({});
const typed = () => z.object({ json: colonPairs(), json_types: jsonTypes(), headers: settableHeaderPairs() }).strict().prefault({});

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
