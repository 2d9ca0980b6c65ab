import { z } from 'zod';

/**
 * Kong's `custom_fields_by_lua` (a map of field name → Lua code). Gatehouse runs no Lua: the field is accepted when
 * empty or null, so Kong tools that send the default work, and refused with a message otherwise.
 */
export const customFieldsByLua = z
  .record(z.string(), z.string())
  .nullable()
  .default(null)
  .refine((v) => v === null || Object.keys(v).length === 0, { message: 'custom_fields_by_lua is not supported by gatehouse (no Lua runtime)' });
