import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { hostField, portField, severityFields } from '../shared/log-target';

/** Kong 3.x `loggly` config. */
export const logglyConfigSchema = z
  .object({
    host: hostField().default('logs-01.loggly.com'),
    port: portField().default(514),
    key: z.string(),
    // a set: repeated tags are kept once, in order
    tags: z
      .array(z.string())
      .default(['kong'])
      .transform((tags) => [...new Set(tags)]),
    ...severityFields,
    timeout: z.number().default(10_000),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type LogglyConfig = z.infer<typeof logglyConfigSchema>;
