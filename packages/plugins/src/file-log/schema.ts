import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';

/** Kong 3.x `file-log` config. */
export const fileLogConfigSchema = z
  .object({
    path: z.string().regex(/^[^*&%`]+$/, 'not a valid filename'),
    reopen: z.boolean().default(false),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type FileLogConfig = z.infer<typeof fileLogConfigSchema>;
