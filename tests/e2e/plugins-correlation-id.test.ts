// correlation-id as Kong's access spec (spec/03-plugins/11-correlation-id/01-access_spec.lua) exercises it, through
// real processes in both topologies: the tracker generator's shape, echo_downstream on proxied answers and on the
// gateway's own 502, and `correlation_id` in the log plugins' entries (file-log here; http-log shares the serializer).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Kong's TRACKER_PATTERN: server_addr-server_port-pid-connection-connection_requests-epoch.msec */
const TRACKER_PATTERN = /^\d+\.\d+\.\d+\.\d+-\d+-\d+-\d+-\d+-\d{10}\.\d{3}$/;

describe.each(TOPOLOGIES)('correlation-id (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let dir: string;
  const fileLog = () => join(dir, 'file-log.json');

  async function created(path: string, form: Record<string, string>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** a service on `url` with a route on `/<label>` and the given plugins */
  async function routeWith(label: string, url: string, plugins: Array<Record<string, string>>): Promise<void> {
    await created('/services/', { name: label, url });
    await created(`/services/${label}/routes`, { 'paths[]': `/${label}` });
    for (const plugin of plugins) await created(`/services/${label}/plugins`, plugin);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-correlation-${name}-`));
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);
    await routeWith('tracker', upstream.url, [{ name: 'correlation-id', 'config.generator': 'tracker' }]);
    await routeWith('echoed', upstream.url, [{ name: 'correlation-id', 'config.generator': 'uuid', 'config.echo_downstream': 'true' }]);
    // nothing listens there: the gateway answers 502 itself
    await routeWith('timeout', `http://127.0.0.1:${await freePort()}`, [{ name: 'correlation-id', 'config.generator': 'uuid', 'config.echo_downstream': 'true' }]);
    await routeWith('serializer', upstream.url, [{ name: 'correlation-id' }, { name: 'file-log', 'config.path': fileLog() }]);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('generates a unique tracker id for every request', async () => {
    for (const dp of topology.dataPlanes) {
      const first = await proxied(`${dp.proxyUrl}/tracker/request`);
      const second = await proxied(`${dp.proxyUrl}/tracker/request`);
      const ids = [first.body.headers['kong-request-id'], second.body.headers['kong-request-id']];
      for (const id of ids) expect(id).toMatch(TRACKER_PATTERN);
      expect(ids[0]).not.toBe(ids[1]);
      // the gateway's own address and port on the connection lead the id
      expect(ids[0].startsWith(`127.0.0.1-${new URL(dp.proxyUrl).port}-`)).toBe(true);
    }
  });

  it('echo_downstream sends uuid back to client', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/echoed/request`);
      expect(res.status).toBe(200);
      expect(res.body.headers['kong-request-id']).toMatch(UUID_PATTERN);
      expect(res.headers.get('kong-request-id')).toBe(res.body.headers['kong-request-id']);
    }
  });

  it('echo_downstream sends uuid back to client even when upstream timeouts', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/timeout/request`);
      expect(res.status).toBe(502);
      expect(res.headers.get('kong-request-id')).toMatch(UUID_PATTERN);
    }
  });

  it('contains the Correlation ID (the log serializer)', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/serializer/`, { headers: { 'Kong-Request-ID': `1234-${dp.proxyUrl}` } });
      expect(res.status).toBe(200);
    }
    const entries = () => (existsSync(fileLog()) ? readFileSync(fileLog(), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)) : []);
    await waitUntil('every data plane to write its entry', () => entries().length >= topology.dataPlanes.length, 30_000);
    for (const dp of topology.dataPlanes) {
      const entry = entries().find((e) => e.correlation_id === `1234-${dp.proxyUrl}`);
      expect(entry).toBeDefined();
      expect(entry.request.id).toMatch(/^[a-f0-9]{32}$/);
    }
  });
});
