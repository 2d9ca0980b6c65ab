import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * AWS credentials as Kong's AWS plugins find them: the configured keys, else this process's environment
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`); null when neither has them.
 */
export function awsCredentials(accessKeyId: string | null, secretAccessKey: string | null, env: NodeJS.ProcessEnv = process.env): AwsCredentials | null {
  if (accessKeyId !== null && secretAccessKey !== null) return { accessKeyId, secretAccessKey };
  const id = env.AWS_ACCESS_KEY_ID;
  const secret = env.AWS_SECRET_ACCESS_KEY;
  if (!id || !secret) return null;
  return { accessKeyId: id, secretAccessKey: secret, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
}

/** Signs a request with AWS Signature Version 4 (the AWS SDK's signer); answers the headers to send. */
export async function signAwsRequest(request: { url: URL; method: string; headers: Record<string, string>; body: string }, service: string, region: string, credentials: AwsCredentials): Promise<Record<string, string>> {
  const signer = new SignatureV4({ service, region, credentials, sha256: Hash.bind(null, 'sha256') });
  const query: Record<string, string> = {};
  request.url.searchParams.forEach((value, name) => (query[name] = value));
  const signed = await signer.sign({
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    ...(request.url.port !== '' ? { port: Number(request.url.port) } : {}),
    path: request.url.pathname,
    query,
    headers: { ...request.headers, host: request.url.host },
    body: request.body,
  });
  return signed.headers as Record<string, string>;
}
