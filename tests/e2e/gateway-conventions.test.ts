// Kong's gateway conventions through real processes in both topologies: error bodies by Accept and
// error_default_type, X-Kong-Upstream-Status (when `headers` names it), Via on the upstream request, headers_upstream,
// data-plane labels in /clustering/data-planes, and a log level changed on every node over the bus.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

/** A request without Accept (fetch always sends one). */
function bare(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(TOPOLOGIES)('gateway conventions (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name, {
      env: { GATEHOUSE_HEADERS: 'server_tokens, latency_tokens, X-Kong-Request-Id, X-Kong-Upstream-Status', GATEHOUSE_ERROR_DEFAULT_TYPE: 'text/plain', GATEHOUSE_HEADERS_UPSTREAM: 'off' },
      dataPlaneEnv: (i) => ({ GATEHOUSE_CLUSTER_DP_LABELS: `region:eu-${i},tier:gold` }),
    });
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services', { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await admin.post('/services/echo/routes', { 'paths[]': '/echo' })).status).toBe(201);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  it("answers the gateway's errors in the type Accept asks for, else in error_default_type", async () => {
    for (const dp of topology.dataPlanes) {
      const plain = await bare(`${dp.proxyUrl}/nowhere`);
      expect(plain.status).toBe(404);
      expect(plain.type).toBe('text/plain; charset=utf-8');
      expect(plain.body).toMatch(/^no Route matched with those values\nrequest_id: [0-9a-f]+\n$/);
      const html = await proxied(`${dp.proxyUrl}/nowhere`, { headers: { accept: 'text/html;q=0.9, application/xml;q=0.5' } });
      expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(html.body).toContain('<p>no Route matched with those values.</p>');
      const xml = await proxied(`${dp.proxyUrl}/nowhere`, { headers: { accept: 'application/xml' } });
      expect(xml.body).toContain('<message>no Route matched with those values</message>');
      expect(xml.body).toContain(`<requestid>${xml.headers.get('x-kong-request-id')}</requestid>`);
      const json = await proxied(`${dp.proxyUrl}/nowhere`, { headers: { accept: 'application/json' } });
      expect(json.body).toEqual({ message: 'no Route matched with those values' });
    }
  });

  it('adds X-Kong-Upstream-Status, continues Via upstream, and keeps the request id off upstream (headers_upstream=off)', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/echo/x`, { headers: { 'x-echo-status': '201', via: '1.0 edge' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-kong-upstream-status')).toBe('201');
      expect(res.headers.get('x-kong-request-id')).toMatch(/^[0-9a-f]+$/);
      expect(res.body.headers.via).toMatch(/^1\.0 edge, 1\.1 gatehouse\/\S+$/);
      expect(res.body.headers['x-kong-request-id']).toBeUndefined();
    }
  });

  it("lists the data planes' labels", async () => {
    await waitUntil('data planes with labels', async () => {
      const res = await admin.get('/clustering/data-planes');
      return res.body.data.length === topology.dataPlanes.length && res.body.data.every((p: { labels: Record<string, string> }) => p.labels.tier === 'gold');
    });
    const res = await admin.get('/clustering/data-planes');
    expect(res.body.data.map((p: { labels: { region: string } }) => p.labels.region).sort()).toEqual(topology.dataPlanes.map((_, i) => `eu-${i}`));
    expect(res.body.data.every((p: { sync_status: string }) => p.sync_status === 'normal')).toBe(true);
  });

  it('changes the log level of every node over the bus', async () => {
    const res = await fetch(`${topology.adminUrl}/debug/cluster/log-level/debug?timeout=0`, { method: 'PUT' });
    expect(await res.json()).toEqual({ message: 'log level changed' });
    expect(await (await fetch(`${topology.adminUrl}/debug/node/log-level`)).json()).toEqual({ message: 'log level: debug' });
    if (name === 'cluster') for (const dp of topology.dataPlanes) await dp.process.waitForOutput(/"message":"log level changed","log_level":"debug"/, 15_000);
  });
});
