import { z } from 'zod';
import { parseCidr } from './address-trie';

const ipOrCidr = z.string().refine((value) => parseCidr(value) !== null, { error: (issue) => `invalid ip or cidr range: '${String(issue.input)}'` });

export const ipRestrictionConfigSchema = z
  .object({
    allow: z.array(ipOrCidr).nullable().default(null),
    deny: z.array(ipOrCidr).nullable().default(null),
    status: z.number().nullable().default(null),
    message: z.string().nullable().default(null),
  })
  .strict();

export type IpRestrictionConfig = z.infer<typeof ipRestrictionConfigSchema>;

/** Kong's entity check: a configuration must list something to allow or to deny. */
export function checkIpRestrictionConfig(config: IpRestrictionConfig): Record<string, string[]> | null {
  if ((config.allow ?? []).length === 0 && (config.deny ?? []).length === 0) {
    return { '@entity': ["at least one of these fields must be non-empty: 'config.allow', 'config.deny'"] };
  }
  return null;
}
