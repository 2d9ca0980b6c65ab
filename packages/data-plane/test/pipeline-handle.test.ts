// The proxy's request walk (admission → plugin chain → forwarding → answer) run through ProxyPipeline.handle: no
// client socket and no listener, the upstream a real local HTTP server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { compile, ConfigHolder, ProxyPipeline, type MemoryResponse } from '../src';
import { quietLog } from './harness';

const json = (res: MemoryResponse): any => JSON.parse(res.body.toString('utf8'));

describe('ProxyPipeline.handle', () => {
  let echo: EchoUpstream;
  let pipeline: ProxyPipeline;

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const open = makeService({ name: 'open', url: `${echo.url}/base` });
    const secured = makeService({ name: 'secured', url: echo.url });
    const alice = makeConsumer({ username: 'alice' });
    const routes = [
      makeRoute({ name: 'open', paths: ['/open'], service: { id: open.id } }),
      makeRoute({ name: 'secured', paths: ['/secured'], service: { id: secured.id } }),
      makeRoute({ name: 'tls-only', paths: ['/tls'], protocols: ['https'], service: { id: open.id } }),
      makeRoute({ name: 'local', paths: ['/local'], service: { id: open.id } }),
    ];
    const snapshot = makeSnapshot({
      services: [open, secured],
      routes,
      consumers: [alice],
      plugins: [
        makePlugin({ name: 'key-auth', service: { id: secured.id }, config: {} }),
        makePlugin({ name: 'ip-restriction', route: { id: routes[3]!.id }, config: { allow: ['127.0.0.0/8'] } }),
      ],
      credentials: { keyauth_credentials: [makeCredential(alice, { key: 'alice-key' })] },
    });
    pipeline = new ProxyPipeline({ holder: new ConfigHolder(compile(snapshot)), log: quietLog });
  });

  afterAll(async () => {
    await pipeline.close();
    await echo.close();
  });

  it('answers 404 in Kong\'s shape when no route matches, stamped by the gateway', async () => {
    const res = await pipeline.handle({ url: '/nowhere' });
    expect(res.status).toBe(404);
    expect(json(res)).toMatchObject({ message: 'no Route matched with those values' });
    expect(res.headers['x-kong-response-latency']).toMatch(/^\d+$/);
    expect(res.headers['x-kong-request-id']).toMatch(/^[0-9a-f]+$/);
  });

  it('gives the plugin\'s answer when key-auth refuses, and proxies once the key is given', async () => {
    const missing = await pipeline.handle({ url: '/secured/x' });
    expect(missing.status).toBe(403);
    expect(json(missing)).toEqual({ message: 'No API key found in headers or querystring' });
    const wrong = await pipeline.handle({ url: '/secured/x', headers: { apikey: 'wrong' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Key realm="gatehouse"');
    expect(echo.received.some((r) => r.path === '/x')).toBe(false);
    const letIn = await pipeline.handle({ url: '/secured/x', headers: { apikey: 'alice-key' } });
    expect(letIn.status).toBe(200);
    expect(json(letIn).headers['x-consumer-username']).toBe('alice');
  });

  it('proxies to the real upstream: path joined, query, method and body relayed, gateway headers stamped', async () => {
    const res = await pipeline.handle({ method: 'POST', url: '/open/users?b=2', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(200);
    const echoed = json(res);
    expect(echoed).toMatchObject({ method: 'POST', path: '/base/users', url: '/base/users?b=2', body: 'hello' });
    expect(echoed.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(res.headers['x-kong-upstream-latency']).toMatch(/^\d+$/);
    expect(res.headers['x-kong-proxy-latency']).toMatch(/^\d+$/);
    expect(res.headers.via).toMatch(/gatehouse/);
    expect(echoed.headers['x-kong-request-id']).toBe(res.headers['x-kong-request-id']);
  });

  it('checks the route\'s schemes against the scheme given: 426 over http, proxied over https', async () => {
    expect((await pipeline.handle({ url: '/tls/a' })).status).toBe(426);
    const res = await pipeline.handle({ url: '/tls/a', scheme: 'https' });
    expect(res.status).toBe(200);
    expect(json(res).headers['x-forwarded-proto']).toBe('https');
  });

  it('takes the client address given: a plugin allowing loopback refuses another address', async () => {
    expect((await pipeline.handle({ url: '/local' })).status).toBe(200);
    const refused = await pipeline.handle({ url: '/local', clientAddress: '203.0.113.9' });
    expect(refused.status).toBe(403);
    expect(json(refused).message).toMatch(/IP address not allowed/i);
  });

  it('counts its requests in the server stats', async () => {
    const before = pipeline.stats.total_requests;
    await pipeline.handle({ url: '/nowhere' });
    await pipeline.handle({ url: '/open' });
    expect(pipeline.stats.total_requests).toBe(before + 2);
  });
});
