import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, foreignRef, tags } from './fields';
import { formatHostPort, parseHostPort } from './hosts';

/** The port a target gets when its `target` names none (Kong's). */
export const DEFAULT_TARGET_PORT = 8000;

/** `host[:port]` → Kong's stored form `host:port`; null when it is neither a hostname nor an IP address. */
export function normalizeTarget(value: string): string | null {
  const parsed = parseHostPort(value);
  if (parsed === null) return null;
  return formatHostPort(parsed.host, parsed.port ?? DEFAULT_TARGET_PORT);
}

export const targetSchema = z
  .object({
    ...baseFieldsWithUpdate,
    upstream: foreignRef(),
    target: z
      .string()
      .min(1)
      .max(1024)
      .superRefine((t, ctx) => {
        if (normalizeTarget(t) === null) ctx.addIssue({ code: 'custom', message: `Invalid target ('${t}'); not a valid hostname or ip address` });
      }),
    weight: z.number().int().min(0).max(65535).default(100),
    tags: tags(),
  })
  .strict();
export type Target = z.infer<typeof targetSchema> & { id: string; created_at: number; updated_at: number };

export const targets = defineEntity({
  name: 'targets',
  adminPath: 'targets',
  schema: targetSchema,
  endpointKey: 'target',
  uniques: [],
  compositeUniques: [['upstream', 'target']],
  foreignKeys: [{ field: 'upstream', entity: 'upstreams', onDelete: 'cascade', required: true }],
  updatedAt: true,
  normalizeInput: (input) => {
    if (typeof input.target !== 'string') return input;
    const normalized = normalizeTarget(input.target);
    return normalized === null ? input : { ...input, target: normalized };
  },
});
