import type { z } from 'zod';
import { validateWith } from '@gatehouse/core';

/** The fields a write takes from elsewhere than its body (stored id and timestamps, the URL's endpoint key). */
export const GENERATED_FIELDS = ['id', 'created_at', 'updated_at'] as const;

/**
 * A write that keeps a field as stored, or takes it from the URL, still validates what the body sent for it: a
 * malformed value is a 400 (Kong), never silently dropped into a 2xx.
 */
export function checkOverriddenFields(schema: z.ZodObject, body: Record<string, unknown>, fields: readonly string[]): void {
  const sent = fields.filter((f) => Object.hasOwn(body, f) && body[f] !== undefined && Object.hasOwn(schema.shape, f));
  const unknown = fields.filter((f) => Object.hasOwn(body, f) && body[f] !== undefined && !Object.hasOwn(schema.shape, f));
  if (sent.length === 0 && unknown.length === 0) return;
  const mask: Record<string, true> = Object.fromEntries(sent.map((f) => [f, true as const]));
  // strict, like the entity: a generated field the entity does not have is an unknown field
  validateWith(schema.pick(mask).partial(), Object.fromEntries([...sent, ...unknown].map((f) => [f, body[f]])));
}
