import { z } from 'zod';
import { port } from '@gatehouse/core';

/** Milliseconds for socket timeouts and the idle time of kept connections (Kong's `number` fields). */
const milliseconds = () => z.number().int().min(0).max(2 ** 31 - 1);

export const ldapAuthConfigSchema = z
  .object({
    ldap_host: z
      .string()
      .min(1)
      .refine((v) => !/[\s/]/.test(v), { error: 'invalid value: must be a host name or an IP address' }),
    ldap_port: port().default(389),
    ldaps: z.boolean().default(false),
    start_tls: z.boolean().default(false),
    verify_ldap_host: z.boolean().default(false),
    base_dn: z.string().min(1),
    attribute: z.string().min(1),
    /** seconds a successful bind is remembered */
    cache_ttl: z.number().min(0).default(60),
    hide_credentials: z.boolean().default(false),
    timeout: milliseconds().default(10000),
    keepalive: milliseconds().default(60000),
    anonymous: z.string().min(1).nullable().default(null),
    header_type: z.string().min(1).default('ldap'),
    realm: z.string().nullable().default(null),
  })
  .strict();

export type LdapAuthConfig = z.infer<typeof ldapAuthConfigSchema>;

/** Kong's conditional check: LDAPS and StartTLS are two ways to the same thing, never both. */
export function checkLdapAuthConfig(config: LdapAuthConfig): Record<string, string | string[]> | null {
  if (config.ldaps && config.start_tls) {
    return {
      '@entity': ["failed conditional validation given value of field 'config.ldaps'"],
      start_tls: "'ldaps' and 'start_tls' cannot be enabled simultaneously",
    };
  }
  return null;
}
