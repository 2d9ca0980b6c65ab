// Upstreams and targets through real processes in both topologies (decision 21): balancing by algorithm and weight,
// hashing stability, retries, active and passive health both ways, manual health on every data plane, DNS through a
// test DNS server, 503 when no target is left, and the control plane's /health view of every data plane.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startTargetServer, startTestDnsServer, type TargetServer, type TestDnsServer } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

describe.each(TOPOLOGIES)('upstreams and targets (%s)', (name) => {
  let topology: Topology;
  let admin: ReturnType<typeof adminClient>;
  let dns: TestDnsServer;
  let t1: TargetServer;
  let t2: TargetServer;
  let sick: TargetServer;
  let failing: TargetServer;
  let slow: TargetServer;
  let closedPort: number;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    [t1, t2, sick, failing, slow] = await Promise.all([
      startTargetServer('t1'),
      startTargetServer('t2'),
      startTargetServer('sick', { healthStatus: 500 }),
      startTargetServer('failing', { status: 500 }),
      startTargetServer('slow', { delayMs: 300 }),
    ]);
    closedPort = await freePort();
    topology = await startTopology(name, { env: { GATEHOUSE_DNS_RESOLVER: dns.address } });
    admin = adminClient(topology.adminUrl);
  }, 120_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => Promise.all([t1, t2, sick, failing, slow].map((s) => s?.close())),
      () => dns?.close(),
    );
  });

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** an upstream, its targets, and a service + route `/<label>` whose host is the upstream */
  async function balanced(label: string, upstream: Record<string, string>, targets: Array<Record<string, string>>, service: Record<string, string> = {}) {
    const up = await created('/upstreams', { name: `${label}.e2e`, ...upstream });
    for (const t of targets) await created(`/upstreams/${label}.e2e/targets`, t);
    await created('/services', { name: label, host: `${label}.e2e`, ...service });
    await created(`/services/${label}/routes`, { 'paths[]': `/${label}` });
    return up;
  }

  /** `n` requests through one data plane, the serving target's name (or the status) of each */
  async function served(dpIndex: number, path: string, n: number, headers: Record<string, string> = {}): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await proxied(`${topology.dataPlanes[dpIndex]!.proxyUrl}${path}`, { headers });
      out.push(r.status === 200 ? String(r.body.target) : String(r.status));
    }
    return out;
  }

  const everyDataPlane = async (check: (i: number) => Promise<boolean>) => {
    for (let i = 0; i < topology.dataPlanes.length; i++) if (!(await check(i))) return false;
    return true;
  };

  const count = (names: string[]) => names.reduce<Record<string, number>>((acc, n) => ({ ...acc, [n]: (acc[n] ?? 0) + 1 }), {});

  const healthOf = async (upstream: string) => {
    const res = await admin.get(`/upstreams/${upstream}/health`);
    return Object.fromEntries((res.body.data as Array<{ target: string; health: string; data_planes: unknown[] }>).map((t) => [t.target, t]));
  };

  it('the admin API lists upstreams and their targets as Kong Manager reads them', async () => {
    await balanced('lb', {}, [
      { target: t1.address, weight: '300' },
      { target: t2.address, weight: '100' },
    ]);
    const list = await admin.get('/upstreams');
    expect(list.body.data.map((u: { name: string }) => u.name)).toContain('lb.e2e');
    const targets = await admin.get('/upstreams/lb.e2e/targets');
    expect(targets.body.data.map((t: { target: string; weight: number }) => `${t.target}/${t.weight}`).sort()).toEqual([`${t1.address}/300`, `${t2.address}/100`].sort());
    expect((await admin.get('/schemas/upstreams')).status).toBe(200);
  });

  it('round-robin spreads requests by weight on every data plane', async () => {
    await topology.converge();
    for (let i = 0; i < topology.dataPlanes.length; i++) expect(count(await served(i, '/lb', 40))).toEqual({ t1: 30, t2: 10 });
  });

  it('manual unhealthy reaches every data plane, and manual healthy brings the target back', async () => {
    expect((await admin.put(`/upstreams/lb.e2e/targets/${t2.address}/unhealthy`, {})).status).toBe(204);
    await waitUntil('t2 out of rotation on every data plane', () => everyDataPlane(async (i) => (await served(i, '/lb', 4)).every((n) => n === 't1')), 5_000);
    await waitUntil('/health to show t2 unhealthy', async () => (await healthOf('lb.e2e'))[t2.address]!.health === 'UNHEALTHY');
    expect((await healthOf('lb.e2e'))[t2.address]!.data_planes).toHaveLength(topology.dataPlanes.length);
    expect((await admin.put(`/upstreams/lb.e2e/targets/${t2.address}/healthy`, {})).status).toBe(204);
    await waitUntil('t2 back on every data plane', () => everyDataPlane(async (i) => (await served(i, '/lb', 4)).includes('t2')), 5_000);
  });

  it('consistent hashing sends a key to the same target on every data plane', async () => {
    await balanced('hash', { algorithm: 'consistent-hashing', hash_on: 'header', hash_on_header: 'x-user' }, [{ target: t1.address }, { target: t2.address }]);
    await topology.converge();
    const placements = new Set<string>();
    for (const user of Array.from({ length: 16 }, (_, i) => `user-${i}`)) {
      const seen = new Set<string>();
      for (let i = 0; i < topology.dataPlanes.length; i++) for (const n of await served(i, '/hash', 2, { 'x-user': user })) seen.add(n);
      expect(seen.size).toBe(1);
      placements.add([...seen][0]!);
    }
    expect(placements).toEqual(new Set(['t1', 't2']));
  });

  it('retries a closed target on the next one', async () => {
    await balanced('retry', {}, [{ target: `127.0.0.1:${closedPort}` }, { target: t1.address }], { retries: '2' });
    await topology.converge();
    for (let i = 0; i < topology.dataPlanes.length; i++) expect(await served(i, '/retry', 6)).toEqual(['t1', 't1', 't1', 't1', 't1', 't1']);
  });

  it('latency moves traffic to the faster target', async () => {
    await balanced('latency', { algorithm: 'latency' }, [{ target: slow.address }, { target: t1.address }]);
    await topology.converge();
    for (let i = 0; i < topology.dataPlanes.length; i++) expect((await served(i, '/latency', 8)).slice(4)).toEqual(['t1', 't1', 't1', 't1']);
  });

  it('active checks take a target whose health path answers 500 out, and back once it answers 200', async () => {
    await balanced(
      'active',
      {
        'healthchecks.active.http_path': '/health',
        'healthchecks.active.healthy.interval': '0.2',
        'healthchecks.active.healthy.successes': '2',
        'healthchecks.active.unhealthy.interval': '0.2',
        'healthchecks.active.unhealthy.http_failures': '2',
      },
      [{ target: t1.address }, { target: sick.address }],
    );
    await topology.converge();
    await waitUntil('sick out of rotation on every data plane', () => everyDataPlane(async (i) => (await served(i, '/active', 4)).every((n) => n === 't1')));
    await waitUntil('/health to report sick unhealthy and t1 healthy', async () => {
      const h = await healthOf('active.e2e');
      return h[sick.address]!.health === 'UNHEALTHY' && h[t1.address]!.health === 'HEALTHY';
    });
    const balancer = await admin.get('/upstreams/active.e2e/health?balancer_health=1');
    expect(balancer.body.data.health).toBe('HEALTHY');
    sick.healthStatus = 200;
    await waitUntil('sick back on every data plane', () => everyDataPlane(async (i) => (await served(i, '/active', 4)).includes('sick')));
    await waitUntil('/health to report sick healthy', async () => (await healthOf('active.e2e'))[sick.address]!.health === 'HEALTHY');
  });

  it('passive checks open the circuit on http failures; manual healthy closes it', async () => {
    await balanced('passive', { 'healthchecks.passive.unhealthy.http_failures': '1' }, [{ target: t1.address }, { target: failing.address }]);
    await topology.converge();
    await waitUntil('failing out of rotation on every data plane', () => everyDataPlane(async (i) => (await served(i, '/passive', 4)).every((n) => n === 't1')));
    await waitUntil('/health to report failing unhealthy', async () => (await healthOf('passive.e2e'))[failing.address]!.health === 'UNHEALTHY');
    failing.status = 200;
    expect((await admin.put(`/upstreams/passive.e2e/targets/${failing.address}/healthy`, {})).status).toBe(204);
    await waitUntil('failing back on every data plane', () => everyDataPlane(async (i) => (await served(i, '/passive', 4)).includes('failing')), 5_000);
  });

  it('resolves targets given by name through DNS and reports a name that does not resolve as DNS_ERROR', async () => {
    dns.set('api.dns.e2e', [{ address: '127.0.0.1', ttl: 5 }]);
    await balanced('named', {}, [{ target: `api.dns.e2e:${t2.port}` }, { target: 'missing.dns.e2e:80' }]);
    await topology.converge();
    await waitUntil('the named target to serve on every data plane', () => everyDataPlane(async (i) => (await served(i, '/named', 3)).every((n) => n === 't2')));
    expect(t2.lastHeaders!.host).toBe(`api.dns.e2e:${t2.port}`);
    await waitUntil('/health to report DNS_ERROR', async () => (await healthOf('named.e2e'))['missing.dns.e2e:80']!.health === 'DNS_ERROR');
  });

  it('answers 503 when no target is available', async () => {
    await balanced('empty', {}, []);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const r = await proxied(`${dp.proxyUrl}/empty`);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ message: 'failure to get a peer from the ring-balancer' });
    }
  });
});
