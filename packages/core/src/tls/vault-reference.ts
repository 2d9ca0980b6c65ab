/**
 * Kong's secret references: `{vault://<prefix>/<name>[/<key>]}`. A field Kong marks referenceable may hold one
 * instead of its value; the data plane resolves it from its own environment when it compiles a snapshot, so the
 * control plane's database and Redis only ever hold the reference.
 */
export const VAULT_REFERENCE = /^\{vault:\/\/([a-z][a-z0-9-]*[a-z0-9]|[a-z])\/([^/{}]+)(?:\/([^{}]+))?\}$/;

export interface VaultReference {
  /** the vault's prefix: `env`, or the `prefix` of a `vaults` entity */
  prefix: string;
  /** the secret's name */
  name: string;
  /** a key inside a JSON secret, when given */
  key: string | null;
}

export function isVaultReference(value: unknown): value is string {
  return typeof value === 'string' && value.length > 10 && value.charCodeAt(0) === 123 /* { */ && VAULT_REFERENCE.test(value);
}

export function parseVaultReference(value: string): VaultReference | null {
  const m = VAULT_REFERENCE.exec(value);
  if (!m) return null;
  return { prefix: m[1]!, name: decodeURIComponent(m[2]!), key: m[3] === undefined ? null : decodeURIComponent(m[3]) };
}

/** The vaults bundled with Gatehouse (Kong's `env`). */
export const BUNDLED_VAULTS = ['env'] as const;

/** the referenceable credential fields of an AI plugin's `auth` record at `at` */
function aiAuthFields(at: string): string[] {
  return ['header_name', 'header_value', 'param_name', 'param_value', 'gcp_service_account_json', 'aws_access_key_id', 'aws_secret_access_key'].map((f) => `${at}.${f}`);
}

/**
 * Plugin config fields Kong marks referenceable, by plugin name (dotted paths inside `config`). Only these are
 * resolved on the data plane; a reference anywhere else stays the literal string it is.
 */
export const REFERENCEABLE_PLUGIN_FIELDS: Record<string, readonly string[]> = {
  'ldap-auth': ['ldap_password', 'bind_dn'],
  'rate-limiting': ['redis_password', 'redis_username', 'redis.password', 'redis.username'],
  'proxy-cache': ['redis.password', 'redis.username'],
  'http-log': ['http_endpoint'],
  'oauth2': ['provision_key'],
  // the AI plugins' provider credentials (Kong's referenceable auth fields); `*` is each element of a list
  'aws-lambda': ['aws_key', 'aws_secret', 'aws_assume_role_arn'],
  'azure-functions': ['apikey', 'clientid'],
  'ai-proxy': aiAuthFields('auth').concat(aiAuthFields('fallbacks.*.auth')),
  'ai-request-transformer': aiAuthFields('llm.auth'),
  'ai-response-transformer': aiAuthFields('llm.auth'),
  'acme': ['account_email', 'eab_kid', 'eab_hmac_key', 'storage_config.redis.password', 'storage_config.redis.username', 'storage_config.vault.token'],
  'response-ratelimiting': ['redis.password', 'redis.username'],
  'session': ['secret'],
  'standard-webhooks': ['secret_v1'],
};
