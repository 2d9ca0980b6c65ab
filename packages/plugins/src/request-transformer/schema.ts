import { z } from 'zod';
import { colonPairs, names } from '../shared/colon-pairs';

const section = (pairs: boolean) =>
  z
    .object({
      body: pairs ? colonPairs() : names(),
      headers: pairs ? colonPairs() : names(),
      querystring: pairs ? colonPairs() : names(),
    })
    .strict();

export const requestTransformerConfigSchema = z
  .object({
    http_method: z
      .string()
      .regex(/^[A-Z]+$/, { error: "invalid value: should be an uppercase HTTP method" })
      .nullable()
      .default(null),
    remove: section(false).prefault({}),
    rename: section(true).prefault({}),
    replace: section(true)
      .extend({ uri: z.string().nullable().default(null) })
      .prefault({}),
    add: section(true).prefault({}),
    append: section(true).prefault({}),
  })
  .strict();

export type RequestTransformerConfig = z.infer<typeof requestTransformerConfigSchema>;
