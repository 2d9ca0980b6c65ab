import { createHash } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { request } from 'undici';

/** The fields of a Google Cloud service-account key file that the token exchange needs. */
interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

interface Cached {
  token: string;
  refreshAt: number;
}

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const tokens = new Map<string, Cached>();

function parseServiceAccount(json: string): ServiceAccount | string {
  let parsed: Partial<ServiceAccount>;
  try {
    parsed = JSON.parse(json) as Partial<ServiceAccount>;
  } catch {
    return 'the service account is not JSON';
  }
  if (typeof parsed.client_email !== 'string' || typeof parsed.private_key !== 'string') return 'the service account has no client_email or private_key';
  return { client_email: parsed.client_email, private_key: parsed.private_key, private_key_id: parsed.private_key_id, token_uri: typeof parsed.token_uri === 'string' ? parsed.token_uri : 'https://oauth2.googleapis.com/token' };
}

/** An RS256 assertion for the service account, signed with its key (RFC 7523), valid one hour. */
async function assertion(account: ServiceAccount): Promise<string> {
  const key = await importPKCS8(account.private_key, 'RS256');
  return new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setAudience(account.token_uri)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
}

/**
 * An OAuth2 access token for a Google Cloud service account (Kong's `auth.gcp_use_service_account`): a signed JWT
 * exchanged at the account's `token_uri` for a bearer token, kept until shortly before it expires. `json` is
 * `auth.gcp_service_account_json`, else the `GCP_SERVICE_ACCOUNT` environment variable. A string says what failed.
 */
export async function gcpAccessToken(json: string | null, env: NodeJS.ProcessEnv = process.env): Promise<{ token: string } | string> {
  const text = json ?? env.GCP_SERVICE_ACCOUNT ?? null;
  if (text === null) return 'no service account: set auth.gcp_service_account_json, or GCP_SERVICE_ACCOUNT';
  const key = createHash('sha256').update(text).digest('hex');
  const cached = tokens.get(key);
  if (cached !== undefined && cached.refreshAt > Date.now()) return { token: cached.token };
  const account = parseServiceAccount(text);
  if (typeof account === 'string') return account;
  try {
    const res = await request(account.token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: GRANT, assertion: await assertion(account) }).toString(),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const answer = (await res.body.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown; error_description?: unknown; error?: unknown };
    if (res.statusCode !== 200 || typeof answer.access_token !== 'string') return `the token endpoint answered ${res.statusCode}: ${String(answer.error_description ?? answer.error ?? 'no access_token')}`;
    const lifetime = (typeof answer.expires_in === 'number' ? answer.expires_in : 3600) * 1000;
    tokens.set(key, { token: answer.access_token, refreshAt: Date.now() + lifetime - Math.min(300_000, lifetime / 2) });
    return { token: answer.access_token };
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
