import { readFile } from 'node:fs/promises';
import { AssumeRoleCommand, AssumeRoleWithWebIdentityCommand, STSClient, type Credentials } from '@aws-sdk/client-sts';
import { awsCredentials, type AwsCredentials } from './aws-signer';
import { instanceCredentials, type ImdsVersion } from './aws-instance-credentials';

/** Where a plugin's AWS credentials may come from, besides this process's environment and the instance role. */
export interface AwsCredentialSource {
  accessKeyId: string | null;
  secretAccessKey: string | null;
  region: string;
  imds: ImdsVersion;
  /** STS AssumeRole with the credentials found first (Kong's `aws_assume_role_arn`, `aws_role_session_name`, `aws_sts_endpoint_url`) */
  assumeRole?: { roleArn: string; sessionName: string; stsEndpoint: string | null } | null;
}

interface Cached {
  credentials: AwsCredentials;
  refreshAt: number;
}

/** temporary credentials from STS, per role, session and the credentials that asked; kept until 5 minutes before they expire */
const temporary = new Map<string, Cached>();

/** STS's endpoint: the configured one, `AWS_ENDPOINT_URL_STS` / `AWS_ENDPOINT_URL`, else the region's. */
function stsEndpoint(region: string, env: NodeJS.ProcessEnv, configured: string | null = null): string {
  return configured ?? env.AWS_ENDPOINT_URL_STS ?? env.AWS_ENDPOINT_URL ?? `https://sts.${region}.amazonaws.com`;
}

async function fromSts(key: string, call: () => Promise<Credentials | undefined>): Promise<AwsCredentials> {
  const cached = temporary.get(key);
  if (cached !== undefined && cached.refreshAt > Date.now()) return cached.credentials;
  const found = await call();
  if (!found?.AccessKeyId || !found.SecretAccessKey) throw new Error('STS answered without credentials');
  const credentials: AwsCredentials = { accessKeyId: found.AccessKeyId, secretAccessKey: found.SecretAccessKey, ...(found.SessionToken ? { sessionToken: found.SessionToken } : {}) };
  const expires = found.Expiration?.getTime() ?? Date.now() + 3_600_000;
  temporary.set(key, { credentials, refreshAt: expires - Math.min(300_000, (expires - Date.now()) / 2) });
  return credentials;
}

const stsClient = (region: string, endpoint: string, credentials?: AwsCredentials) => new STSClient({ region, endpoint, maxAttempts: 2, ...(credentials ? { credentials } : {}) });

/**
 * IAM roles for service accounts (EKS IRSA): the token in `AWS_WEB_IDENTITY_TOKEN_FILE` exchanged for the role in
 * `AWS_ROLE_ARN` with STS AssumeRoleWithWebIdentity (session name `AWS_ROLE_SESSION_NAME`, else `gatehouse`). The
 * file is read again each time the credentials are renewed, as the cluster rotates it.
 */
async function webIdentityCredentials(region: string, env: NodeJS.ProcessEnv): Promise<AwsCredentials | null> {
  const file = env.AWS_WEB_IDENTITY_TOKEN_FILE;
  const roleArn = env.AWS_ROLE_ARN;
  if (!file || !roleArn) return null;
  const endpoint = stsEndpoint(region, env);
  const session = env.AWS_ROLE_SESSION_NAME || 'gatehouse';
  return fromSts(`web|${file}|${roleArn}|${session}|${endpoint}`, async () => {
    const token = (await readFile(file, 'utf8')).trim();
    const answer = await stsClient(region, endpoint).send(new AssumeRoleWithWebIdentityCommand({ RoleArn: roleArn, RoleSessionName: session, WebIdentityToken: token }));
    return answer.Credentials;
  });
}

/**
 * The credentials a call is signed with, in Kong's order: the configured keys, else the environment
 * (`AWS_ACCESS_KEY_ID`, …), else a web identity token (IRSA), else the instance role from IMDS; then, with
 * `assumeRole`, the role those credentials assume through STS. A string says why there are none.
 */
export async function resolveAwsCredentials(source: AwsCredentialSource, env: NodeJS.ProcessEnv = process.env): Promise<AwsCredentials | string> {
  let base: AwsCredentials | null;
  try {
    base = awsCredentials(source.accessKeyId, source.secretAccessKey, env) ?? (await webIdentityCredentials(source.region, env)) ?? (await instanceCredentials(source.imds, env).catch(() => null));
  } catch (err) {
    return `no AWS credentials from the web identity token: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (base === null) return 'no AWS credentials (configured keys, the environment, a web identity token, or the instance role)';
  const role = source.assumeRole;
  if (!role) return base;
  const endpoint = stsEndpoint(source.region, env, role.stsEndpoint);
  try {
    return await fromSts(`role|${base.accessKeyId}|${role.roleArn}|${role.sessionName}|${endpoint}`, async () => {
      const answer = await stsClient(source.region, endpoint, base).send(new AssumeRoleCommand({ RoleArn: role.roleArn, RoleSessionName: role.sessionName }));
      return answer.Credentials;
    });
  } catch (err) {
    return `unable to assume role ${role.roleArn}: ${err instanceof Error ? err.message : String(err)}`;
  }
}
