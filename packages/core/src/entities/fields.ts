import { z } from 'zod';

/** Shared field types, Kong's typedefs. */
export const uuid = () => z.uuid();
export const timestamp = () => z.number().int().nonnegative();
export const tags = () => z.array(z.string().min(1).max(128)).nullable().default(null);
export const foreignRef = () => z.object({ id: z.uuid() }).strict();
export const nullableForeign = () => foreignRef().nullable().default(null);
/** Kong's `name` typedef: letters, digits and `-._~`. */
export const utf8Name = () =>
  z
    .string()
    .min(1)
    .regex(/^[\p{L}\p{N}\-._~]+$/u, 'invalid value: must contain only alphanumeric and \'., -, _, ~\' characters');
export const timeout = () => z.number().int().min(1).max(2 ** 31 - 2);
export const port = () => z.number().int().min(0).max(65535);

/** The generated fields every entity carries. */
export const baseFields = {
  id: uuid().optional(),
  created_at: timestamp().optional(),
};
export const baseFieldsWithUpdate = {
  ...baseFields,
  updated_at: timestamp().optional(),
};
