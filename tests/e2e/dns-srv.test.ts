// SRV records for upstream targets (Kong's dns_order, default LAST,SRV,A,CNAME) through real processes in both
// topologies, with a DNS server the test runs (GATEHOUSE_DNS_RESOLVER): a target (or a service host) named by an SRV
// name balances over the records of the lowest priority, on their ports and by their weights, and the data plane's
// /status/dns counts the lookups per name and type.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTargetServer, startTestDnsServer, type TargetServer, type TestDnsServer } from '@gatehouse/testkit';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const SRV_NAME = '_http._tcp.api.srv.test';

describe.each(TOPOLOGIES)('SRV targets (%s)', (name) => {
  let topology: Topology;
  let dns: TestDnsServer;
  let light: TargetServer;
  let heavy: TargetServer;
  let backup: TargetServer;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    [light, heavy, backup] = await Promise.all([startTargetServer('light'), startTargetServer('heavy'), startTargetServer('backup')]);
    dns.set('hosts.srv.test', [{ address: '127.0.0.1', ttl: 30 }]);
    dns.set(SRV_NAME, [
      { address: '', srv: { priority: 10, weight: 1, port: light.port, target: 'hosts.srv.test' } },
      { address: '', srv: { priority: 10, weight: 3, port: heavy.port, target: 'hosts.srv.test' } },
      // a higher priority number: used only when no record of a lower one is left
      { address: '', srv: { priority: 20, weight: 10, port: backup.port, target: 'hosts.srv.test' } },
    ]);
    topology = await startTopology(name, { env: { GATEHOUSE_DNS_RESOLVER: dns.address } });
    const admin = adminClient(topology.adminUrl);
    expect((await admin.post('/upstreams', { name: 'srv.e2e' })).status).toBe(201);
    // no port: the SRV records give them
    expect((await admin.post('/upstreams/srv.e2e/targets', { target: SRV_NAME })).status).toBe(201);
    expect((await admin.post('/services', { name: 'srv', host: 'srv.e2e' })).status).toBe(201);
    expect((await admin.post('/services/srv/routes', { 'paths[]': '/srv' })).status).toBe(201);
    // a service whose host is the SRV name itself (its port is the records')
    expect((await admin.post('/services', { name: 'srv-host', host: SRV_NAME, port: '9' })).status).toBe(201);
    expect((await admin.post('/services/srv-host/routes', { 'paths[]': '/srv-host' })).status).toBe(201);
    await topology.converge();
  }, 180_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => Promise.all([light, heavy, backup].map((s) => s?.close())),
      () => dns?.close(),
    );
  });

  it('balances over the lowest-priority records by their weights, on their ports', async () => {
    for (const dp of topology.dataPlanes) {
      await waitUntil('the SRV name to resolve', async () => (await proxied(`${dp.proxyUrl}/srv`)).status === 200);
      const served: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await proxied(`${dp.proxyUrl}/srv`);
        expect(res.status).toBe(200);
        served.push(String(res.body.target));
      }
      // smooth weighted round-robin: any 8 picks are two rounds of 1 + 3
      expect(served.filter((t) => t === 'light')).toHaveLength(2);
      expect(served.filter((t) => t === 'heavy')).toHaveLength(6);
    }
    expect(backup.hits).toBe(0);
    // the Host header names the SRV name and the record's port
    expect(heavy.lastHeaders!.host).toBe(`${SRV_NAME}:${heavy.port}`);
  });

  it('a service host that is an SRV name is resolved through its records too', async () => {
    for (const dp of topology.dataPlanes) {
      await waitUntil('the service host to resolve', async () => (await proxied(`${dp.proxyUrl}/srv-host`)).status === 200);
      const served: string[] = [];
      for (let i = 0; i < 8; i++) served.push(String((await proxied(`${dp.proxyUrl}/srv-host`)).body.target));
      expect(served.filter((t) => t === 'light')).toHaveLength(2);
      expect(served.filter((t) => t === 'heavy')).toHaveLength(6);
    }
    expect(backup.hits).toBe(0);
  });

  it('/status/dns counts the lookups per name and record type', async () => {
    for (const dp of topology.dataPlanes) {
      const status = await getJson(`${dp.statusUrl}/status/dns`);
      expect(status.worker).toEqual({ id: 0, count: 1 });
      expect(status.stats[`${SRV_NAME}|SRV`]).toMatchObject({ runs: expect.any(Number), query: expect.any(Number), query_succ: expect.any(Number) });
      expect(status.stats['hosts.srv.test|A']).toMatchObject({ query_succ: expect.any(Number) });
    }
  });
});
