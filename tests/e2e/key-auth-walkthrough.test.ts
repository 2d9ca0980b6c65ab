// The interface document's configuration walkthrough (newer releases), proxied, in both topologies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

describe.each(TOPOLOGIES)('key-auth and anonymous access walkthrough (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let pluginId: string;
  let anonymousId: string;
  let aliceId: string;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services/', { name: 'example-service', url: `${upstream.url}/` })).status).toBe(201);
    expect((await admin.post('/services/example-service/routes', { 'paths[]': '/example' })).status).toBe(201);
    const plugin = await admin.post('/services/example-service/plugins/', { name: 'key-auth' });
    expect(plugin.status).toBe(201);
    pluginId = plugin.body.id;
    const alice = await admin.post('/consumers/', { username: 'alice' });
    expect(alice.status).toBe(201);
    aliceId = alice.body.id;
    expect((await admin.post('/consumers/alice/key-auth', { key: 'alice-key' })).status).toBe(201);
    const anonymous = await admin.post('/consumers/', { username: 'anonymous_users' });
    expect(anonymous.status).toBe(201);
    expect(Object.keys(anonymous.body).sort()).toEqual(expect.arrayContaining(['created_at', 'id', 'username']));
    anonymousId = anonymous.body.id;
    // Kong's key-auth2.test: hide_credentials
    expect((await admin.post('/services/', { name: 'hidden-service', url: `${upstream.url}/` })).status).toBe(201);
    expect((await admin.post('/services/hidden-service/routes', { 'paths[]': '/hidden' })).status).toBe(201);
    expect((await admin.post('/services/hidden-service/plugins/', { name: 'key-auth', 'config.hide_credentials': 'true' })).status).toBe(201);
    await topology.converge();
  });

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  it('answers 403 with the document\'s message when no apikey is sent and anonymous is not configured', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/example/anything`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'No API key found in headers or querystring' });
    }
  });

  it('answers 401 for an unknown key', async () => {
    const res = await proxied(`${topology.proxyUrl}/example`, { headers: { apikey: 'nope' } });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Invalid authentication credentials');
  });

  it('forwards a valid key from a header or the query string with the consumer headers, on every data plane', async () => {
    for (const dp of topology.dataPlanes) {
      const viaHeader = await proxied(`${dp.proxyUrl}/example/a`, { headers: { apikey: 'alice-key' } });
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.body.path).toBe('/a');
      expect(viaHeader.body.headers['x-consumer-id']).toBe(aliceId);
      expect(viaHeader.body.headers['x-consumer-username']).toBe('alice');
      expect(viaHeader.body.headers['x-anonymous-consumer']).toBeUndefined();
      const viaQuery = await proxied(`${dp.proxyUrl}/example/b?apikey=alice-key&x=1`);
      expect(viaQuery.status).toBe(200);
      expect(viaQuery.body.query).toEqual({ apikey: 'alice-key', x: '1' });
    }
  });

  describe('config.hide_credentials', () => {
    const urlSeen = async (path: string) => {
      const urls = new Set<string>();
      for (const dp of topology.dataPlanes) {
        const res = await proxied(`${dp.proxyUrl}${path}`);
        expect(res.status).toBe(200);
        urls.add(res.body.url);
      }
      return [...urls];
    };

    it('does not remove apikey and preserves order of query parameters', async () => {
      expect(await urlSeen('/example/request?c=value1&b=value2&apikey=alice-key&a=value3')).toEqual(['/request?c=value1&b=value2&apikey=alice-key&a=value3']);
    });

    it('removes apikey and preserves order of query parameters', async () => {
      expect(await urlSeen('/hidden/request?c=value1&b=value2&apikey=alice-key&a=value3')).toEqual(['/request?c=value1&b=value2&a=value3']);
    });

    it('removes apikey in encoded query and preserves order of query parameters', async () => {
      expect(await urlSeen('/hidden/request?c=valu%651&b=value2&api%6B%65%79=alice-key&a=valu%653')).toEqual(['/request?c=value1&b=value2&a=value3']);
    });
  });

  it('lets requests without valid credentials through as the anonymous consumer once config.anonymous is set', async () => {
    const patched = await admin.patch(`/plugins/${pluginId}`, { 'config.anonymous': anonymousId });
    expect(patched.status).toBe(200);
    expect(patched.body.config.anonymous).toBe(anonymousId);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/example`, { headers: { apikey: 'wrong' } });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-consumer-id']).toBe(anonymousId);
      expect(res.body.headers['x-consumer-username']).toBe('anonymous_users');
      expect(res.body.headers['x-anonymous-consumer']).toBe('true');
      const valid = await proxied(`${dp.proxyUrl}/example`, { headers: { apikey: 'alice-key' } });
      expect(valid.body.headers['x-consumer-id']).toBe(aliceId);
      expect(valid.body.headers['x-anonymous-consumer']).toBeUndefined();
    }
  });

  it('never lets a client choose its own identity headers', async () => {
    const res = await proxied(`${topology.proxyUrl}/example`, {
      headers: { apikey: 'alice-key', 'x-consumer-id': 'forged', 'x-anonymous-consumer': 'true', 'x-credential-identifier': 'forged' },
    });
    expect(res.body.headers['x-consumer-id']).toBe(aliceId);
    expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
    expect(res.body.headers['x-credential-identifier']).not.toBe('forged');
  });
});
