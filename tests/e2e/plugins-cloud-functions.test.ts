// aws-lambda and azure-functions through real processes in both topologies, against local stand-ins: a Lambda Invoke
// endpoint that checks the AWS Signature V4 of every call (independently of the signer the gateway uses), an EC2
// instance metadata service (IMDS v2) handing out temporary credentials, STS for assumed roles, and an Azure Functions
// host; Bedrock through ai-proxy signs with the same credential chain.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { ASSUMED_ROLE, lambdaStandIn, listen, startStsStandIn, type Invocation, type StsStandIn } from './support/aws-stand-ins';
import { startLlmStandIn, type LlmStandIn } from './support/llm-stand-ins';

const KEY_ID = 'AKIDLAMBDA0000';
const SECRET = 'lambda-stand-in-secret/0123456789';
const IMDS_KEY_ID = 'ASIAINSTANCEROLE00';
const IMDS_SECRET = 'instance-role-secret/abcdef';
const IMDS_TOKEN = 'instance-session-token';

/** IMDS v2: a session token by PUT, then the role's name and its temporary credentials with that token. */
function imdsStandIn(): Server {
  return createServer((req, res) => {
    const tokenOk = req.headers['x-aws-ec2-metadata-token'] === 'imds-session';
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      res.end('imds-session');
    } else if (!tokenOk) {
      res.writeHead(401);
      res.end();
    } else if (req.url === '/latest/meta-data/iam/security-credentials/') {
      res.end('gateway-role');
    } else if (req.url === '/latest/meta-data/iam/security-credentials/gateway-role') {
      res.end(JSON.stringify({ Code: 'Success', AccessKeyId: IMDS_KEY_ID, SecretAccessKey: IMDS_SECRET, Token: IMDS_TOKEN, Expiration: new Date(Date.now() + 3_600_000).toISOString() }));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
}

describe.each(TOPOLOGIES)('aws-lambda and azure-functions (%s)', (name) => {
  let topology: Topology;
  let service: EchoUpstream;
  let lambda: Server;
  let imds: Server;
  let azure: EchoUpstream;
  let sts: StsStandIn;
  let bedrock: LlmStandIn;
  const invocations: Invocation[] = [];

  async function created(path: string, body: unknown): Promise<any> {
    const res = await fetch(`${topology.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function routeWith(label: string, plugin: unknown): Promise<void> {
    await created('/services', { name: label, url: service.url });
    await created(`/services/${label}/routes`, { paths: [`/${label}`] });
    await created(`/services/${label}/plugins`, plugin);
  }

  beforeAll(async () => {
    service = await startEchoUpstream();
    lambda = lambdaStandIn(invocations, [{ keyId: KEY_ID, secret: SECRET }, { keyId: IMDS_KEY_ID, secret: IMDS_SECRET, sessionToken: IMDS_TOKEN }]);
    sts = await startStsStandIn([{ keyId: KEY_ID, secret: SECRET }]);
    bedrock = await startLlmStandIn({ awsCredentials: [{ keyId: IMDS_KEY_ID, secret: IMDS_SECRET, sessionToken: IMDS_TOKEN }] });
    imds = imdsStandIn();
    azure = await startEchoUpstream();
    const lambdaUrl = new URL(await listen(lambda));
    const imdsUrl = await listen(imds);
    // the data planes find the instance role's credentials on the stand-in IMDS
    topology = await startTopology(name, { dataPlaneEnv: { AWS_EC2_METADATA_SERVICE_ENDPOINT: imdsUrl, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' } });
    const target = { aws_region: 'eu-central-1', host: lambdaUrl.hostname, port: Number(lambdaUrl.port), disable_https: true };
    const keys = { aws_key: KEY_ID, aws_secret: SECRET };
    await routeWith('lambda', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'echo', qualifier: 'live', log_type: 'None' } });
    await routeWith('lambda-forward', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'echo', forward_request_method: true, forward_request_uri: true, forward_request_body: true } });
    await routeWith('lambda-gateway', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'echo', awsgateway_compatible: true } });
    await routeWith('lambda-proxy', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'proxy', is_proxy_integration: true } });
    await routeWith('lambda-crash', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'crash', unhandled_status: 412 } });
    await routeWith('lambda-role', { name: 'aws-lambda', config: { ...target, function_name: 'echo', aws_imds_protocol_version: 'v2' } });
    const assume = (role: string) => ({ aws_assume_role_arn: `arn:aws:iam::123456789012:role/${role}`, aws_role_session_name: 'gateway-session', aws_sts_endpoint_url: sts.url });
    await routeWith('lambda-assume', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'echo', ...assume('invoker') } });
    await routeWith('lambda-forbidden', { name: 'aws-lambda', config: { ...target, ...keys, function_name: 'echo', ...assume('forbidden') } });
    await routeWith('bedrock-role', { name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'bedrock', name: 'amazon.nova-lite-v1', options: { upstream_url: bedrock.url, bedrock: { aws_region: 'eu-west-1' } } } } });
    // `127` + `.` + `0.0.1:<port>`: Kong's appname.hostdomain naming a local Functions host on its own port
    await routeWith('azure', { name: 'azure-functions', config: { appname: '127', hostdomain: `0.0.1:${new URL(azure.url).port}`, https: false, functionname: 'hello', apikey: 'functions-key', clientid: 'client-1' } });
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => service?.close(),
      () => azure?.close(),
      () => new Promise<void>((resolve) => lambda?.close(() => resolve())),
      () => new Promise<void>((resolve) => imds?.close(() => resolve())),
      () => sts?.close(),
      () => bedrock?.close(),
    );
  });

  const post = (url: string, body: string, type = 'application/json') => proxied(url, { method: 'POST', headers: { 'content-type': type }, body });

  it('invokes the function, signed, with the query and body arguments merged, and answers with its result', async () => {
    for (const dp of topology.dataPlanes) {
      const before = invocations.length;
      const res = await post(`${dp.proxyUrl}/lambda?key1=some_value1`, JSON.stringify({ key2: 'some_value2' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ got: { key1: 'some_value1', key2: 'some_value2' } });
      expect(res.headers.get('x-amz-executed-version')).toBe('$LATEST');
      const call = invocations[before]!;
      expect(call.functionName).toBe('echo');
      expect(call.query.get('Qualifier')).toBe('live');
      expect(call.headers['x-amz-invocation-type']).toBe('RequestResponse');
      expect(call.headers['x-amz-log-type']).toBe('None');
      expect(invocations.length).toBe(before + 1);
      expect(service.received.length).toBe(0);
    }
  });

  it('forwards the method, URI and body when asked', async () => {
    const dp = topology.dataPlanes[0]!;
    const res = await post(`${dp.proxyUrl}/lambda-forward/some/path?a=1&a=2`, 'plain text', 'text/plain');
    expect(res.status).toBe(200);
    expect(res.body.got).toEqual({ request_method: 'POST', request_uri: '/lambda-forward/some/path?a=1&a=2', request_uri_args: { a: ['1', '2'] }, request_body: 'plain text', request_body_args: {} });
  });

  it('sends the API Gateway event with awsgateway_compatible', async () => {
    const dp = topology.dataPlanes[0]!;
    const res = await post(`${dp.proxyUrl}/lambda-gateway/users?x=1`, '{"n":1}');
    expect(res.status).toBe(200);
    expect(res.body.got).toMatchObject({ version: '1.0', httpMethod: 'POST', path: '/lambda-gateway/users', queryStringParameters: { x: '1' }, multiValueQueryStringParameters: { x: ['1'] }, isBase64Encoded: true, body: Buffer.from('{"n":1}').toString('base64') });
    expect(res.body.got.requestContext).toMatchObject({ httpMethod: 'POST', protocol: 'HTTP/1.1' });
  });

  it('reads a proxy-integration answer: its status, headers and base64 body', async () => {
    const dp = topology.dataPlanes[0]!;
    const res = await proxied(`${dp.proxyUrl}/lambda-proxy`);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-from-lambda')).toBe('yes');
    expect(res.body).toBe('made by lambda');
  });

  it('answers unhandled_status when the function failed unhandled', async () => {
    const res = await proxied(`${topology.dataPlanes[0]!.proxyUrl}/lambda-crash`);
    expect(res.status).toBe(412);
    expect(res.body).toEqual({ errorMessage: 'boom' });
  });

  it('signs with the instance role from IMDS v2 when no keys are configured', async () => {
    for (const dp of topology.dataPlanes) {
      const before = invocations.length;
      const res = await post(`${dp.proxyUrl}/lambda-role`, '{}');
      expect(res.status).toBe(200);
      expect(String(invocations[before]!.headers.authorization)).toContain(`Credential=${IMDS_KEY_ID}/`);
      expect(invocations[before]!.headers['x-amz-security-token']).toBe(IMDS_TOKEN);
    }
  });

  it('signs with the role assumed through STS (aws_assume_role_arn), asked once per data plane with the configured keys', async () => {
    for (const dp of topology.dataPlanes) {
      for (let i = 0; i < 2; i++) {
        const before = invocations.length;
        const res = await post(`${dp.proxyUrl}/lambda-assume`, '{}');
        expect(res.status).toBe(200);
        expect(String(invocations[before]!.headers.authorization)).toContain(`Credential=${ASSUMED_ROLE.keyId}/`);
        expect(invocations[before]!.headers['x-amz-security-token']).toBe(ASSUMED_ROLE.sessionToken);
      }
    }
    const asked = sts.calls.filter((c) => c.params.get('RoleArn') === 'arn:aws:iam::123456789012:role/invoker');
    expect(asked.length).toBe(topology.dataPlanes.length);
    for (const call of asked) {
      expect(call).toMatchObject({ action: 'AssumeRole', signedBy: KEY_ID });
      expect(call.params.get('RoleSessionName')).toBe('gateway-session');
    }
  });

  it('answers 500 when STS refuses the role, without calling the function', async () => {
    const before = invocations.length;
    const res = await post(`${topology.dataPlanes[0]!.proxyUrl}/lambda-forbidden`, '{}');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ message: 'An unexpected error occurred' });
    expect(invocations.length).toBe(before);
  });

  it('signs Bedrock calls (ai-proxy) with the instance role when neither the config nor the environment has keys', async () => {
    for (const dp of topology.dataPlanes) {
      const before = bedrock.seen.length;
      const res = await post(`${dp.proxyUrl}/bedrock-role`, JSON.stringify({ messages: [{ role: 'user', content: 'hi role' }] }));
      expect(res.status).toBe(200);
      expect(res.body.choices[0].message.content).toBe('echo: hi role');
      expect(String(bedrock.seen[before]!.headers.authorization)).toContain(`Credential=${IMDS_KEY_ID}/`);
      expect(bedrock.seen[before]!.headers['x-amz-security-token']).toBe(IMDS_TOKEN);
    }
  });

  it('azure-functions calls the function with its keys, the method, query and body, and answers with its response', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await post(`${dp.proxyUrl}/azure?name=ada`, 'hello');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-echo-upstream')).toBe('true');
      expect(res.body).toMatchObject({ method: 'POST', path: '/api/hello', query: { name: 'ada' }, body: 'hello' });
      expect(res.body.headers).toMatchObject({ 'x-functions-key': 'functions-key', 'x-functions-clientid': 'client-1' });
    }
  });

  it("validates configurations with Kong's messages", async () => {
    const res = await fetch(`${topology.adminUrl}/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'aws-lambda', config: { aws_key: 'x', function_name: 'f' } }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).fields['@entity']).toEqual(["all or none of these fields must be set: 'config.aws_key', 'config.aws_secret'"]);
    const azureMissing = await fetch(`${topology.adminUrl}/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'azure-functions', config: { functionname: 'f' } }) });
    expect(azureMissing.status).toBe(400);
    expect(((await azureMissing.json()) as any).fields.config.appname).toBe('required field missing');
  });
});
