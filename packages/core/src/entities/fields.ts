import { z } from 'zod';

/** Shared field types, Kong's typedefs. */
/** Kong's uuid typedef: any 8-4-4-4-12 hex id (Kong exports ids that are not RFC 4122 ones) */
export const uuid = () => z.guid();
export const timestamp = () => z.number().int().nonnegative();
export const tags = () => z.array(z.string().min(1).max(128)).nullable().default(null);
export const foreignRef = () => z.object({ id: uuid() }).strict();
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
