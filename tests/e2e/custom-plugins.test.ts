// Custom plugins named in GATEHOUSE_PLUGINS (Kong's `plugins` setting), in both topologies: a TypeScript plugin in
// Gatehouse's contract (examples/plugins/hello-header) and a plugin written for Kong's JavaScript plugin server
// (examples/plugins/js-greeting, the kong-pdk module shape), each known to the admin API (schema, validation) and run
// by every data plane.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const PLUGINS = 'bundled,./examples/plugins/hello-header,./examples/plugins/js-greeting';

describe.each(TOPOLOGIES)('custom plugins from GATEHOUSE_PLUGINS (%s)', (name) => {
  let topology: Topology;
  let upstream: Server;

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, headers: req.headers }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    topology = await startTopology(name, { env: { GATEHOUSE_PLUGINS: PLUGINS } });
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    await created('/services', { name: 'custom', url });
    await created('/services/custom/routes', { name: 'ts', paths: ['/ts'] });
    await created('/services/custom/routes', { name: 'js', paths: ['/js'] });
    await created('/routes/ts/plugins', { name: 'hello-header', config: { greeting: 'hi' } });
    await created('/routes/js/plugins', { name: 'js-greeting', config: { message: 'salut' } });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  });

  it('lists both plugins as available, with their priorities, and serves their schemas', async () => {
    const root = await admin('GET', '/');
    expect(root.body.plugins.available_on_server['hello-header']).toMatchObject({ priority: 900, version: '1.0.0' });
    expect(root.body.plugins.available_on_server['js-greeting']).toMatchObject({ priority: 0, version: '0.1.0' });
    expect((await admin('GET', '/schemas/plugins/js-greeting')).status).toBe(200);
  });

  it('validates their configs with their schemas', async () => {
    const res = await admin('POST', '/plugins', { name: 'js-greeting', config: { message: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.fields.config.message).toBeDefined();
  });

  it('runs the TypeScript plugin on the data plane', async () => {
    const res = await proxied(`${topology.proxyUrl}/ts`);
    expect(res.status).toBe(200);
    expect(res.body.headers['x-hello']).toBe('hi anonymous');
  });

  it('runs the kong-pdk plugin unchanged over the PDK subset', async () => {
    const res = await proxied(`${topology.proxyUrl}/js/x`);
    expect(res.status).toBe(200);
    expect(res.body.headers['x-greeting']).toBe(`salut from ${new URL(topology.proxyUrl).host}`);
    expect(res.headers.get('x-greeting-path')).toBe('/js/x');
    const refused = await proxied(`${topology.proxyUrl}/js`, { headers: { 'x-refuse': 'yes' } });
    expect([refused.status, refused.body.message]).toEqual([403, 'refused by salut']);
  });
});
