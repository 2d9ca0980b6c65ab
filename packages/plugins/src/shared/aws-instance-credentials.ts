import { request } from 'undici';
import type { AwsCredentials } from './aws-signer';

/** Which IMDS protocol to speak: v1, v2 (with its session token), or v2 falling back to v1 as the AWS SDKs do. */
export type ImdsVersion = 'v1' | 'v2' | 'auto';

interface Cached {
  credentials: AwsCredentials;
  /** epoch ms after which they are fetched again */
  refreshAt: number;
}

const fromInstance = new Map<string, Cached>();
const timeouts = { headersTimeout: 1000, bodyTimeout: 1000 };

/** IMDS v2's session token, or null when the service gives none. */
async function sessionToken(endpoint: string): Promise<string | null> {
  try {
    const token = await request(`${endpoint}/latest/api/token`, { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' }, ...timeouts });
    const text = await token.body.text();
    return token.statusCode === 200 ? text : null;
  } catch {
    return null;
  }
}

/**
 * The instance role's credentials from the EC2 instance metadata service, kept until five minutes before they
 * expire. `AWS_EC2_METADATA_SERVICE_ENDPOINT` moves the service (tests, or an IPv6 endpoint); its default is Amazon's
 * `http://169.254.169.254`. Null when the service has none.
 */
export async function instanceCredentials(version: ImdsVersion, env: NodeJS.ProcessEnv): Promise<AwsCredentials | null> {
  const endpoint = (env.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? 'http://169.254.169.254').replace(/\/$/, '');
  const cached = fromInstance.get(`${version}|${endpoint}`);
  if (cached !== undefined && cached.refreshAt > Date.now()) return cached.credentials;
  const headers: Record<string, string> = {};
  if (version !== 'v1') {
    const token = await sessionToken(endpoint);
    if (token !== null) headers['x-aws-ec2-metadata-token'] = token;
    else if (version === 'v2') return null;
  }
  const base = `${endpoint}/latest/meta-data/iam/security-credentials/`;
  const roles = await request(base, { headers, ...timeouts });
  const names = await roles.body.text();
  if (roles.statusCode !== 200) return null;
  const found = await request(`${base}${names.split('\n')[0]!.trim()}`, { headers, ...timeouts });
  const body = (await found.body.json().catch(() => ({}))) as { AccessKeyId?: string; SecretAccessKey?: string; Token?: string; Expiration?: string };
  if (found.statusCode !== 200 || !body.AccessKeyId || !body.SecretAccessKey) return null;
  const credentials: AwsCredentials = { accessKeyId: body.AccessKeyId, secretAccessKey: body.SecretAccessKey, ...(body.Token ? { sessionToken: body.Token } : {}) };
  const expires = body.Expiration ? Date.parse(body.Expiration) : Date.now() + 3_600_000;
  fromInstance.set(`${version}|${endpoint}`, { credentials, refreshAt: expires - 300_000 });
  return credentials;
}
