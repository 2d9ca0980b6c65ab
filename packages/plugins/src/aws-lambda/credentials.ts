import { request } from 'undici';
import { awsCredentials, type AwsCredentials } from '../shared/aws-signer';
import type { AwsLambdaConfig } from './schema';

interface Cached {
  credentials: AwsCredentials;
  /** epoch ms after which they are fetched again */
  refreshAt: number;
}

const fromInstance = new Map<string, Cached>();

/**
 * The instance role's credentials from the EC2 instance metadata service (IMDS v1, or v2 with its session token),
 * kept until five minutes before they expire. `AWS_EC2_METADATA_SERVICE_ENDPOINT` moves the service (tests, or an
 * IPv6 endpoint); its default is Amazon's `http://169.254.169.254`.
 */
async function instanceCredentials(version: AwsLambdaConfig['aws_imds_protocol_version'], env: NodeJS.ProcessEnv): Promise<AwsCredentials | null> {
  const endpoint = (env.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? 'http://169.254.169.254').replace(/\/$/, '');
  const cached = fromInstance.get(`${version}|${endpoint}`);
  if (cached !== undefined && cached.refreshAt > Date.now()) return cached.credentials;
  const headers: Record<string, string> = {};
  if (version === 'v2') {
    const token = await request(`${endpoint}/latest/api/token`, { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' }, headersTimeout: 1000, bodyTimeout: 1000 });
    if (token.statusCode !== 200) return null;
    headers['x-aws-ec2-metadata-token'] = await token.body.text();
  }
  const base = `${endpoint}/latest/meta-data/iam/security-credentials/`;
  const roles = await request(base, { headers, headersTimeout: 1000, bodyTimeout: 1000 });
  if (roles.statusCode !== 200) return null;
  const role = (await roles.body.text()).split('\n')[0]!.trim();
  const found = await request(`${base}${role}`, { headers, headersTimeout: 1000, bodyTimeout: 1000 });
  if (found.statusCode !== 200) return null;
  const body = (await found.body.json()) as { AccessKeyId?: string; SecretAccessKey?: string; Token?: string; Expiration?: string };
  if (!body.AccessKeyId || !body.SecretAccessKey) return null;
  const credentials: AwsCredentials = { accessKeyId: body.AccessKeyId, secretAccessKey: body.SecretAccessKey, ...(body.Token ? { sessionToken: body.Token } : {}) };
  const expires = body.Expiration ? Date.parse(body.Expiration) : Date.now() + 3_600_000;
  fromInstance.set(`${version}|${endpoint}`, { credentials, refreshAt: expires - 300_000 });
  return credentials;
}

/**
 * The credentials a Lambda call is signed with, in Kong's order: `aws_key`/`aws_secret`, else the environment
 * (`AWS_ACCESS_KEY_ID`, …), else the instance role from IMDS. Null when none has them.
 */
export async function lambdaCredentials(config: AwsLambdaConfig, env: NodeJS.ProcessEnv = process.env): Promise<AwsCredentials | null> {
  const configured = awsCredentials(config.aws_key, config.aws_secret, env);
  if (configured !== null) return configured;
  try {
    return await instanceCredentials(config.aws_imds_protocol_version, env);
  } catch {
    return null;
  }
}
