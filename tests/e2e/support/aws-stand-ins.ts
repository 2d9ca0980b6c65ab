// Test stand-ins for AWS services: Lambda's Invoke API, and STS (AssumeRole signed with SigV4 by the caller's
// credentials, and AssumeRoleWithWebIdentity, unsigned, with the web identity token) answering in STS's query-protocol
// XML. Signatures are checked independently of the SDK the gateway uses.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sigV4Problem, type SigV4Expectation } from './aws-sigv4';

export interface TemporaryCredentials {
  keyId: string;
  secret: string;
  sessionToken: string;
}

/** what the STS stand-in hands out: for AssumeRole, and for AssumeRoleWithWebIdentity */
export const ASSUMED_ROLE: TemporaryCredentials = { keyId: 'ASIAASSUMEDROLE0001', secret: 'assumed-role-secret/0123', sessionToken: 'assumed-role-session' };
export const WEB_IDENTITY_ROLE: TemporaryCredentials = { keyId: 'ASIAWEBIDENTITY0001', secret: 'web-identity-secret/4567', sessionToken: 'web-identity-session' };
export const WEB_IDENTITY_TOKEN = 'eyJ-stand-in-service-account-token';

/** The SigV4 expectation matching the access key a request was signed with, among `known`; null when none. */
export function expectationFor(req: IncomingMessage, service: string, known: Array<{ keyId: string; secret: string; sessionToken?: string }>): SigV4Expectation | null {
  const auth = String(req.headers.authorization ?? '');
  const found = known.find((k) => auth.includes(`Credential=${k.keyId}/`));
  return found === undefined ? null : { keyId: found.keyId, secret: found.secret, service, ...(found.sessionToken !== undefined ? { sessionToken: found.sessionToken } : {}) };
}

export interface StsCall {
  action: string;
  params: URLSearchParams;
  /** the access key that signed it (AssumeRole), null when unsigned */
  signedBy: string | null;
}

export interface StsStandIn {
  url: string;
  calls: StsCall[];
  close(): Promise<void>;
}

function xml(action: string, c: TemporaryCredentials, roleArn: string): string {
  const expiration = new Date(Date.now() + 3_600_000).toISOString();
  return `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${action}Result><Credentials><AccessKeyId>${c.keyId}</AccessKeyId><SecretAccessKey>${c.secret}</SecretAccessKey><SessionToken>${c.sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>${roleArn}/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser></${action}Result><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></${action}Response>`;
}

function fault(code: string, message: string): string {
  return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r-2</RequestId></ErrorResponse>`;
}

/** STS: AssumeRole for callers signing with one of `callers`; AssumeRoleWithWebIdentity for WEB_IDENTITY_TOKEN. */
export async function startStsStandIn(callers: Array<{ keyId: string; secret: string; sessionToken?: string }>): Promise<StsStandIn> {
  const calls: StsCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const params = new URLSearchParams(raw.toString('utf8'));
      const action = params.get('Action') ?? '';
      const answer = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'text/xml' });
        res.end(body);
      };
      if (req.method !== 'POST' || params.get('Version') !== '2011-06-15' || !params.get('RoleArn') || !params.get('RoleSessionName')) return answer(400, fault('InvalidParameter', 'Version, RoleArn and RoleSessionName are required'));
      if (action === 'AssumeRoleWithWebIdentity') {
        calls.push({ action, params, signedBy: null });
        if (req.headers.authorization !== undefined) return answer(400, fault('InvalidParameter', 'AssumeRoleWithWebIdentity is not signed'));
        if (params.get('WebIdentityToken') !== WEB_IDENTITY_TOKEN) return answer(400, fault('InvalidIdentityToken', 'the token is not valid'));
        return answer(200, xml(action, WEB_IDENTITY_ROLE, params.get('RoleArn')!));
      }
      if (action !== 'AssumeRole') return answer(400, fault('InvalidAction', `unknown action ${action}`));
      const expected = expectationFor(req, 'sts', callers);
      const problem = expected === null ? 'unknown caller' : sigV4Problem(req, raw, expected);
      calls.push({ action, params, signedBy: expected?.keyId ?? null });
      if (problem !== null) return answer(403, fault('SignatureDoesNotMatch', problem));
      if (params.get('RoleArn')!.endsWith('/forbidden')) return answer(403, fault('AccessDenied', 'not authorized to perform sts:AssumeRole'));
      return answer(200, xml(action, ASSUMED_ROLE, params.get('RoleArn')!));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface Invocation {
  functionName: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  payload: any;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * Lambda's Invoke API, for calls signed with one of `known` (the STS stand-in's roles always): `echo` answers the
 * payload, `proxy` an API Gateway proxy answer, `crash` an unhandled error.
 */
export function lambdaStandIn(invocations: Invocation[], known: Array<{ keyId: string; secret: string; sessionToken?: string }>): Server {
  const accepted = [...known, ...[ASSUMED_ROLE, WEB_IDENTITY_ROLE].map((c) => ({ keyId: c.keyId, secret: c.secret, sessionToken: c.sessionToken }))];
  return createServer((req, res) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
      const expected = expectationFor(req, 'lambda', accepted);
      const problem = expected === null ? 'unknown access key' : sigV4Problem(req, raw, expected);
      if (m === null || problem !== null) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Message: problem ?? 'no such function' }));
        return;
      }
      const payload = JSON.parse(raw.toString('utf8'));
      invocations.push({ functionName: decodeURIComponent(m[1]!), query: url.searchParams, headers: req.headers, payload });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' };
      if (m[1] === 'proxy') {
        res.writeHead(200, headers);
        res.end(JSON.stringify({ statusCode: 201, headers: { 'x-from-lambda': 'yes' }, body: Buffer.from('made by lambda').toString('base64'), isBase64Encoded: true }));
      } else if (m[1] === 'crash') {
        res.writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' });
        res.end(JSON.stringify({ errorMessage: 'boom' }));
      } else {
        res.writeHead(200, headers);
        res.end(JSON.stringify({ got: payload }));
      }
    });
  });
}
