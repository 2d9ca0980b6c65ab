// An independent check of AWS Signature Version 4 for the test stand-ins of AWS services (Bedrock, Lambda), written
// from AWS's published algorithm: canonical request, string to sign, derived key.
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface SigV4Expectation {
  keyId: string;
  secret: string;
  service: string;
  /** the session token the request must carry (temporary credentials) */
  sessionToken?: string;
}

/** Null when the request's `Authorization` header is a valid SigV4 signature for `expected`, else what is wrong. */
export function sigV4Problem(req: IncomingMessage, body: Buffer, expected: SigV4Expectation): string | null {
  const auth = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (m === null) return `not a SigV4 Authorization header: ${auth}`;
  const [, keyId, date, region, service, signedList, signature] = m as unknown as string[];
  if (keyId !== expected.keyId) return `unknown access key ${keyId}`;
  if (service !== expected.service) return `signed for service ${service}`;
  if (expected.sessionToken !== undefined && req.headers['x-amz-security-token'] !== expected.sessionToken) return 'missing or wrong X-Amz-Security-Token';
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const query = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`).join('&');
  const headers = signedList!.split(';').map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, url.pathname, query, headers, signedList, sha256(body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${expected.secret}`, date!), region!), service!), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex') === signature ? null : 'signature does not match';
}
