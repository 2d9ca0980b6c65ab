import { z } from 'zod';

export const aclConfigSchema = z
  .object({
    allow: z.array(z.string()).nullable().default(null),
    deny: z.array(z.string()).nullable().default(null),
    hide_groups_header: z.boolean().default(false),
    always_use_authenticated_groups: z.boolean().default(false),
  })
  .strict();

export type AclConfig = z.infer<typeof aclConfigSchema>;

const FIELDS = "'config.allow', 'config.deny'";

/** Kong's two entity checks: exactly one of allow / deny, and at least one (both fail when neither is given). */
export function checkAclConfig(config: AclConfig): Record<string, string[]> | null {
  const given = (config.allow?.length ? 1 : 0) + (config.deny?.length ? 1 : 0);
  if (given === 1) return null;
  const errors = [`exactly one of these fields must be non-empty: ${FIELDS}`];
  if (given === 0) errors.push(`at least one of these fields must be non-empty: ${FIELDS}`);
  return { '@entity': errors };
}
