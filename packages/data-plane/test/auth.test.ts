import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Plugin } from '@gatehouse/core';
import { hashPassword } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { startDataPlane, type RunningDataPlane } from './harness';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * key-auth (priority 1250) and basic-auth (1100) together on one service, through the real proxy: each test loads the
 * plugin configuration it needs.
 */
describe('authentication through the proxy', () => {
  let echo: EchoUpstream;
  let gw: RunningDataPlane;
  const keyUser = makeConsumer({ username: 'key-user' });
  const basicUser = makeConsumer({ username: 'basic-user', custom_id: 'b-7' });
  const anonymous = makeConsumer({ username: 'anonymous' });
  let service: ReturnType<typeof makeService>;
  let route: ReturnType<typeof makeRoute>;
  let basicCredential: ReturnType<typeof makeCredential>;

  const load = (plugins: Plugin[]) =>
    gw.load(
      makeSnapshot({
        services: [service],
        routes: [route],
        consumers: [keyUser, basicUser, anonymous],
        plugins,
        credentials: { keyauth_credentials: [makeCredential(keyUser, { key: 'the-key' })], basicauth_credentials: [basicCredential] },
      }),
    );
  const keyAuth = (config: Record<string, unknown> = {}) => makePlugin({ name: 'key-auth', service: { id: service.id }, config });
  const basicAuth = (config: Record<string, unknown> = {}) => makePlugin({ name: 'basic-auth', service: { id: service.id }, config });
  const upstreamHeaders = async (headers: Record<string, string>) => {
    const reply = await gw.send('/api', { headers });
    return { status: reply.status, headers: reply.json?.headers, body: reply.json };
  };

  beforeAll(async () => {
    echo = await startEchoUpstream();
    service = makeService({ name: 'api', url: echo.url });
    route = makeRoute({ paths: ['/api'], service: { id: service.id } });
    basicCredential = makeCredential(basicUser, await hashPassword({ username: 'bob', password: 's3cret' }, null));
    gw = await startDataPlane(null);
  });

  afterAll(async () => {
    await gw.close();
    await echo.close();
  });

  it('AND: both credentials needed; the lower-priority plugin (basic-auth) sets the upstream consumer', async () => {
    load([keyAuth(), basicAuth()]);
    const both = await upstreamHeaders({ apikey: 'the-key', authorization: basic('bob', 's3cret') });
    expect(both.status).toBe(200);
    expect(both.headers).toMatchObject({ 'x-consumer-id': basicUser.id, 'x-consumer-username': 'basic-user', 'x-consumer-custom-id': 'b-7', 'x-credential-identifier': 'bob' });
    const onlyKey = await upstreamHeaders({ apikey: 'the-key' });
    expect(onlyKey.status).toBe(401);
    expect(onlyKey.body).toEqual({ message: 'Unauthorized' });
    const onlyBasic = await gw.send('/api', { headers: { authorization: basic('bob', 's3cret') } });
    expect(onlyBasic.status).toBe(403);
    const wrongPassword = await gw.send('/api', { headers: { apikey: 'the-key', authorization: basic('bob', 'nope') } });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.headers['www-authenticate']).toBe('Basic realm="service"');
  });

  it('OR: the first plugin that authenticates wins; none → the anonymous consumer with x-anonymous-consumer', async () => {
    load([keyAuth({ anonymous: anonymous.id }), basicAuth({ anonymous: anonymous.id })]);
    const both = await upstreamHeaders({ apikey: 'the-key', authorization: basic('bob', 's3cret') });
    expect(both.headers['x-consumer-id']).toBe(keyUser.id);
    const onlyBasic = await upstreamHeaders({ authorization: basic('bob', 's3cret') });
    expect(onlyBasic.headers['x-consumer-id']).toBe(basicUser.id);
    expect(onlyBasic.headers['x-anonymous-consumer']).toBeUndefined();
    const none = await upstreamHeaders({ 'x-anonymous-consumer': 'false', 'x-credential-identifier': 'spoof' });
    expect(none.status).toBe(200);
    expect(none.headers).toMatchObject({ 'x-consumer-id': anonymous.id, 'x-consumer-username': 'anonymous', 'x-anonymous-consumer': 'true' });
    expect(none.headers['x-credential-identifier']).toBeUndefined();
  });

  it('OR with request-termination on the anonymous consumer: anonymous requests are refused, authenticated ones pass', async () => {
    load([
      keyAuth({ anonymous: anonymous.id }),
      basicAuth({ anonymous: anonymous.id }),
      makePlugin({ name: 'request-termination', consumer: { id: anonymous.id }, config: { status_code: 401, message: 'authentication required' } }),
    ]);
    const refused = await gw.send('/api');
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ message: 'authentication required' });
    expect((await gw.send('/api', { headers: { apikey: 'the-key' } })).status).toBe(200);
    expect((await gw.send('/api', { headers: { authorization: basic('bob', 's3cret') } })).status).toBe(200);
  });

  it('a dangling anonymous consumer: valid credentials pass, anything else is a 500', async () => {
    load([keyAuth({ anonymous: '7d3c3f2e-0000-4000-8000-00000000dead' })]);
    expect((await gw.send('/api', { headers: { apikey: 'the-key' } })).status).toBe(200);
    const failed = await gw.send('/api');
    expect(failed.status).toBe(500);
    expect(failed.json).toEqual({ message: 'An unexpected error occurred' });
  });

  it('basic-auth hide_credentials keeps the Authorization header from the upstream', async () => {
    load([basicAuth({ hide_credentials: true })]);
    const reply = await upstreamHeaders({ authorization: basic('bob', 's3cret') });
    expect(reply.status).toBe(200);
    expect(reply.headers.authorization).toBeUndefined();
    load([basicAuth()]);
    expect((await upstreamHeaders({ authorization: basic('bob', 's3cret') })).headers.authorization).toBe(basic('bob', 's3cret'));
  });
});
