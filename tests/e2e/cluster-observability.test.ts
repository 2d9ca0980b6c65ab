// What the control plane and the data planes say about the cluster (kong-reference Part B 6, Decision 11), and how
// fast a change reaches every data plane.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts, startEchoUpstream, type EchoUpstream, type SpawnedProcess } from '@gatehouse/testkit';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { adminClient, proxied, spawnGatehouse, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const HASH = /^[0-9a-f]{32}$/;

describe.each(TOPOLOGIES)('cluster observability (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services/', { name: 'svc', url: upstream.url })).status).toBe(201);
    expect((await admin.post('/services/svc/routes', { 'paths[]': '/observed' })).status).toBe(201);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  it('each data plane reports its configuration on /status and is ready once it has one', async () => {
    const { config_version: version } = await getJson(`${topology.adminUrl}/status`);
    for (const dp of topology.dataPlanes) {
      const status = await getJson(`${dp.statusUrl}/status`);
      expect(status.configuration_hash).toMatch(HASH);
      expect(status.configuration_hash).not.toBe('00000000000000000000000000000000');
      expect(status.config_version).toBe(version);
      const ready = await fetch(`${dp.statusUrl}/status/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ message: 'ready' });
    }
    const hashes = await Promise.all(topology.dataPlanes.map(async (dp) => (await getJson(`${dp.statusUrl}/status`)).configuration_hash));
    expect(new Set(hashes).size).toBe(1);
    if (name === 'embedded') expect((await getJson(`${topology.adminUrl}/status`)).configuration_hash).toBe(hashes[0]);
  });

  it('GET /clustering/data-planes lists every data plane with the hash it serves', async () => {
    const statuses = await Promise.all(topology.dataPlanes.map((dp) => getJson(`${dp.statusUrl}/status`)));
    const expected = new Map(statuses.map((s) => [s.node_id as string, s.configuration_hash as string]));
    expect(expected.size).toBe(topology.dataPlanes.length);
    if (name === 'cluster') expect([...expected.keys()].sort()).toEqual(['e2e-dp-0', 'e2e-dp-1']);

    let listed: any[] = [];
    // a data plane reports right after applying a config; wait for the reports of the version being served
    await waitUntil('every data plane to report the hash it serves', async () => {
      const res = await admin.get('/clustering/data-planes');
      listed = res.body.data;
      return [...expected].every(([id, hash]) => listed.some((p) => p.id === id && p.config_hash === hash));
    });
    const res = await admin.get('/clustering/data-planes');
    expect(res.status).toBe(200);
    expect(res.body.next).toBeNull();
    const now = Math.floor(Date.now() / 1000);
    for (const [id, hash] of expected) {
      const plane = listed.find((p) => p.id === id);
      expect(plane).toMatchObject({ id, config_hash: hash, sync_status: 'normal' });
      expect(typeof plane.hostname).toBe('string');
      expect(plane.hostname.length).toBeGreaterThan(0);
      expect(plane.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(Number.isInteger(plane.last_seen)).toBe(true);
      expect(Math.abs(now - plane.last_seen)).toBeLessThan(60);
    }
  });

  it('GET /clustering/data-planes is read-only', async () => {
    const id = topology.name === 'cluster' ? 'e2e-dp-0' : (await getJson(`${topology.dataPlanes[0]!.statusUrl}/status`)).node_id;
    expect((await admin.delete(`/clustering/data-planes/${id}`)).status).toBe(404);
  });

  // how fast: the propagation scenario of the benchmark (tests/bench/propagation.ts, BENCH_ONLY=propagation)
  it('an admin write is pushed to every data plane', async () => {
    for (let i = 0; i < 3; i++) {
      const path = `/propagation-${i}`;
      expect((await proxied(`${topology.proxyUrl}${path}`)).status).toBe(404);
      expect((await admin.post('/services/svc/routes', { 'paths[]': path })).status).toBe(201);
      await Promise.all(
        topology.dataPlanes.map((dp) =>
          waitUntil(`${path} served by ${dp.proxyUrl}`, async () => (await fetch(`${dp.proxyUrl}${path}`)).status === 200, 10_000, 10),
        ),
      );
    }
  });

  it('after a change every data plane reports the new hash, and the list follows', async () => {
    const before = (await getJson(`${topology.dataPlanes[0]!.statusUrl}/status`)).configuration_hash;
    expect((await admin.post('/consumers', { username: 'newcomer' })).status).toBe(201);
    await topology.converge();
    const statuses = await Promise.all(topology.dataPlanes.map((dp) => getJson(`${dp.statusUrl}/status`)));
    const hash = statuses[0].configuration_hash;
    expect(hash).not.toBe(before);
    for (const status of statuses) expect(status.configuration_hash).toBe(hash);
    await waitUntil('the list to show the new hash for every data plane', async () => {
      const listed: any[] = (await admin.get('/clustering/data-planes')).body.data;
      return statuses.every((s) => listed.some((p) => p.id === s.node_id && p.config_hash === hash));
    });
  });
});

describe('a data plane with no Redis reachable and no cache', () => {
  let dp: SpawnedProcess | null = null;
  let dir: string;
  let proxyUrl: string;
  let statusUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-orphan-dp-'));
    const [proxyPort, statusPort, closedPort] = await freePorts(3);
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    statusUrl = `http://127.0.0.1:${statusPort}`;
    dp = await spawnGatehouse(
      'data-plane',
      {
        REDIS_URL: `redis://127.0.0.1:${closedPort}`,
        GATEHOUSE_CLUSTER_SECRET: 'no-one-publishes-with-this-0123456789abcdef',
        GATEHOUSE_DATA_DIR: join(dir, 'dp'),
        GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        GATEHOUSE_PROXY_TLS_LISTEN: 'off',
        GATEHOUSE_LOG_LEVEL: 'error',
      },
      /status API listening/,
      'gatehouse data-plane without redis',
    );
  });

  afterAll(async () => {
    await dp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts, says it is not ready (503) and answers 404 on the proxy', async () => {
    const ready = await fetch(`${statusUrl}/status/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { message: string }).message).toMatch(/no configuration available/);
    const status = await getJson(`${statusUrl}/status`);
    expect(status.config_version).toBeNull();
    const res = await proxied(`${proxyUrl}/anything`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'no Route matched with those values' });
    expect(dp!.isRunning()).toBe(true);
  });
});
