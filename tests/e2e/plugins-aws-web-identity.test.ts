// AWS credentials from a web identity token (EKS IAM roles for service accounts) in both topologies: each data plane
// has AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, and no keys; aws-lambda and ai-proxy's Bedrock exchange the token
// at a local STS stand-in (AssumeRoleWithWebIdentity) and sign with what it hands out, chaining AssumeRole on top
// when aws_assume_role_arn asks for it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { ASSUMED_ROLE, WEB_IDENTITY_ROLE, WEB_IDENTITY_TOKEN, lambdaStandIn, listen, startStsStandIn, type Invocation, type StsStandIn } from './support/aws-stand-ins';
import { startLlmStandIn, type LlmStandIn } from './support/llm-stand-ins';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/gateway-pods';

describe.each(TOPOLOGIES)('AWS web identity credentials (%s)', (name) => {
  let topology: Topology;
  let service: EchoUpstream;
  let lambda: Server;
  let sts: StsStandIn;
  let bedrock: LlmStandIn;
  let dir: string;
  const invocations: Invocation[] = [];

  async function routeWith(label: string, plugin: unknown): Promise<void> {
    for (const [path, body] of [['/services', { name: label, url: service.url }], [`/services/${label}/routes`, { paths: [`/${label}`] }], [`/services/${label}/plugins`, plugin]] as const) {
      const res = await fetch(`${topology.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${await res.text()}`);
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-irsa-${name}-`));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${WEB_IDENTITY_TOKEN}\n`);
    service = await startEchoUpstream();
    lambda = lambdaStandIn(invocations, []);
    sts = await startStsStandIn([{ keyId: WEB_IDENTITY_ROLE.keyId, secret: WEB_IDENTITY_ROLE.secret, sessionToken: WEB_IDENTITY_ROLE.sessionToken }]);
    bedrock = await startLlmStandIn();
    const lambdaUrl = new URL(await listen(lambda));
    topology = await startTopology(name, {
      dataPlaneEnv: { AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile, AWS_ROLE_ARN: ROLE_ARN, AWS_ROLE_SESSION_NAME: 'gateway-pod', AWS_ENDPOINT_URL_STS: sts.url, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    });
    const target = { aws_region: 'eu-central-1', host: lambdaUrl.hostname, port: Number(lambdaUrl.port), disable_https: true, function_name: 'echo' };
    await routeWith('lambda', { name: 'aws-lambda', config: target });
    await routeWith('lambda-assume', { name: 'aws-lambda', config: { ...target, aws_assume_role_arn: 'arn:aws:iam::123456789012:role/invoker', aws_sts_endpoint_url: sts.url } });
    await routeWith('bedrock', { name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'bedrock', name: 'amazon.nova-lite-v1', options: { upstream_url: bedrock.url, bedrock: { aws_region: 'eu-west-1' } } } } });
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => service?.close(),
      () => new Promise<void>((resolve) => lambda?.close(() => resolve())),
      () => sts?.close(),
      () => bedrock?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  const post = (url: string, body: unknown) => proxied(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it("aws-lambda and Bedrock sign with the web identity role's credentials, exchanged once per data plane", async () => {
    for (const dp of topology.dataPlanes) {
      const before = invocations.length;
      const res = await post(`${dp.proxyUrl}/lambda`, { a: 1 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ got: { a: 1 } });
      expect(String(invocations[before]!.headers.authorization)).toContain(`Credential=${WEB_IDENTITY_ROLE.keyId}/`);
      expect(invocations[before]!.headers['x-amz-security-token']).toBe(WEB_IDENTITY_ROLE.sessionToken);
      const seen = bedrock.seen.length;
      const chat = await post(`${dp.proxyUrl}/bedrock`, { messages: [{ role: 'user', content: 'hi pod' }] });
      expect(chat.status).toBe(200);
      expect(chat.body.choices[0].message.content).toBe('echo: hi pod');
      expect(String(bedrock.seen[seen]!.headers.authorization)).toContain(`Credential=${WEB_IDENTITY_ROLE.keyId}/`);
      expect(bedrock.seen[seen]!.headers['x-amz-security-token']).toBe(WEB_IDENTITY_ROLE.sessionToken);
    }
    const exchanges = sts.calls.filter((c) => c.action === 'AssumeRoleWithWebIdentity');
    expect(exchanges.length).toBe(topology.dataPlanes.length);
    for (const call of exchanges) {
      expect(call.params.get('RoleArn')).toBe(ROLE_ARN);
      expect(call.params.get('RoleSessionName')).toBe('gateway-pod');
      expect(call.signedBy).toBeNull();
    }
  });

  it('assumes aws_assume_role_arn with the web identity credentials', async () => {
    for (const dp of topology.dataPlanes) {
      const before = invocations.length;
      const res = await post(`${dp.proxyUrl}/lambda-assume`, {});
      expect(res.status).toBe(200);
      expect(String(invocations[before]!.headers.authorization)).toContain(`Credential=${ASSUMED_ROLE.keyId}/`);
    }
    const assumed = sts.calls.filter((c) => c.action === 'AssumeRole');
    expect(assumed.length).toBe(topology.dataPlanes.length);
    for (const call of assumed) {
      expect(call.signedBy).toBe(WEB_IDENTITY_ROLE.keyId);
      expect(call.params.get('RoleSessionName')).toBe('kong');
    }
  });
});
