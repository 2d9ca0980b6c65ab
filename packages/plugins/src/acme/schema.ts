import { z } from 'zod';

const optionalString = () => z.string().nullable().default(null);
const port = () => z.number().int().min(0).max(65535);

/** Kong's storage records; Gatehouse keeps challenges in the data planes' Redis (or the process) whatever they say. */
const storageConfigSchema = z
  .object({
    shm: z.object({ shm_name: z.string().default('kong') }).strict().prefault({}),
    kong: z.object({}).strict().prefault({}),
    redis: z
      .object({
        host: optionalString(),
        port: port().nullable().default(null),
        timeout: z.number().int().default(2000),
        username: optionalString(),
        password: optionalString(),
        database: z.number().int().default(0),
        ssl: z.boolean().default(false),
        ssl_verify: z.boolean().default(false),
        server_name: optionalString(),
        extra_options: z.object({ namespace: z.string().default(''), scan_count: z.number().default(10) }).strict().prefault({}),
      })
      .strict()
      .prefault({}),
    consul: z
      .object({ host: optionalString(), port: port().nullable().default(null), kv_path: optionalString(), timeout: z.number().nullable().default(null), https: z.boolean().default(false), token: optionalString() })
      .strict()
      .prefault({}),
    vault: z
      .object({
        host: optionalString(),
        port: port().nullable().default(null),
        kv_path: optionalString(),
        timeout: z.number().nullable().default(null),
        https: z.boolean().default(false),
        tls_verify: z.boolean().default(true),
        tls_server_name: optionalString(),
        auth_method: z.enum(['token', 'kubernetes']).default('token'),
        auth_path: optionalString(),
        auth_role: optionalString(),
        jwt_path: optionalString(),
        token: optionalString(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** Kong 3.9 `acme`: the ACME account, the CA, the certificates' kind, and the domains it may ask for. */
export const acmeConfigSchema = z
  .object({
    account_email: z.string().regex(/^\S*@\S*$/, 'invalid value: not an email address').nullable().default(null),
    account_key: z.object({ key_id: z.string(), key_set: optionalString() }).strict().nullable().default(null),
    api_uri: z.url({ error: 'missing host in url' }).default('https://acme-v02.api.letsencrypt.org/directory'),
    tos_accepted: z.boolean().default(false),
    eab_kid: optionalString(),
    eab_hmac_key: optionalString(),
    cert_type: z.enum(['rsa', 'ecc']).default('rsa'),
    rsa_key_size: z.union([z.literal(2048), z.literal(3072), z.literal(4096)], { error: 'expected one of: 2048, 3072, 4096' }).default(4096),
    renew_threshold_days: z.number().default(14),
    domains: z.array(z.string().min(1)).nullable().default(null),
    allow_any_domain: z.boolean().default(false),
    fail_backoff_minutes: z.number().default(5),
    storage: z.enum(['kong', 'shm', 'redis', 'consul', 'vault']).default('shm'),
    storage_config: storageConfigSchema.prefault({}),
    preferred_chain: optionalString(),
    enable_ipv4_common_name: z.boolean().default(true),
  })
  .strict();

export type AcmeConfig = z.infer<typeof acmeConfigSchema>;

const LETS_ENCRYPT = ['https://acme-v02.api.letsencrypt.org', 'https://acme-staging-v02.api.letsencrypt.org'];

/** Kong's entity check: Let's Encrypt's terms of service must be accepted to use it. */
export function checkAcmeConfig(config: AcmeConfig): Record<string, string | string[]> | null {
  const origin = new URL(config.api_uri).origin;
  if (LETS_ENCRYPT.includes(origin) && !config.tos_accepted) {
    return { '@entity': ['terms of service must be accepted, see https://letsencrypt.org/repository/'] };
  }
  return null;
}

/** Whether `host` is one the plugin may ask a certificate for: any with `allow_any_domain`, else those in `domains` (`*.example.com` covers one level). */
export function coversDomain(config: Pick<AcmeConfig, 'domains' | 'allow_any_domain'>, host: string): boolean {
  if (config.allow_any_domain) return true;
  const name = host.toLowerCase();
  for (const domain of config.domains ?? []) {
    const wanted = domain.toLowerCase();
    if (wanted === name) return true;
    if (wanted.startsWith('*.') && name.endsWith(wanted.slice(1)) && !name.slice(0, -wanted.length + 1).includes('.')) return true;
  }
  return false;
}
