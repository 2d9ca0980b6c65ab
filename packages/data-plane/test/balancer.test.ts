import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Snapshot } from '@gatehouse/core';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, makeTarget, makeUpstream, startTargetServer, startTestDnsServer, type TargetServer, type TestDnsServer } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, SystemResolver, type DataPlaneServer } from '../src';
import { closedPort, quietLog, send } from './harness';

/** The balancer in one data plane over real target servers: algorithms, hashing, retries, health, DNS. */

let servers: TargetServer[] = [];
let dns: TestDnsServer;
let dp: DataPlaneServer;
let holder: ConfigHolder;

beforeAll(async () => {
  dns = await startTestDnsServer();
  holder = new ConfigHolder();
  dp = await createDataPlaneServer({
    holder,
    listen: { host: '127.0.0.1', port: 0 },
    log: quietLog,
    balancer: { resolver: new SystemResolver([dns.address]), checkTickMs: 20, dnsTickMs: 50 },
  });
});
afterAll(async () => {
  await dp.close();
  await dns.close();
});
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function targets(n: number): Promise<TargetServer[]> {
  const started = await Promise.all(Array.from({ length: n }, (_, i) => startTargetServer(`t${i + 1}`)));
  servers.push(...started);
  return started;
}

/** a route `/lb` to a service whose host is the upstream `lb.test` */
function load(upstream: Record<string, unknown>, targetRows: Array<Record<string, unknown>>, service: Record<string, unknown> = {}): Snapshot {
  const u = makeUpstream({ name: 'lb.test', ...upstream });
  const svc = makeService({ name: 'lb', host: 'lb.test', port: 80, ...service });
  const snapshot = makeSnapshot({
    services: [svc],
    routes: [makeRoute({ paths: ['/lb'], service: { id: svc.id } })],
    upstreams: [u],
    targets: targetRows.map((t) => makeTarget(u, t)),
  });
  holder.swap(compile(snapshot));
  return snapshot;
}

async function served(n: number, headers: Record<string, string> = {}, path = '/lb'): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await send(dp.port, path, { headers });
    out.push(r.status === 200 ? String(r.json.target) : String(r.status));
  }
  return out;
}

const count = (names: string[]) => names.reduce<Record<string, number>>((acc, n) => ({ ...acc, [n]: (acc[n] ?? 0) + 1 }), {});

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('balancing', () => {
  it('round-robin spreads by weight, and the Host header is the target', async () => {
    const [a, b] = await targets(2);
    load({}, [{ target: a!.address, weight: 300 }, { target: b!.address, weight: 100 }]);
    expect(count(await served(40))).toEqual({ t1: 30, t2: 10 });
    expect(a!.lastHeaders!.host).toBe(a!.address);
  });

  it('host_header replaces the Host sent to every target', async () => {
    const [a] = await targets(1);
    load({ host_header: 'api.internal' }, [{ target: a!.address }]);
    await served(1);
    expect(a!.lastHeaders!.host).toBe('api.internal');
  });

  it('consistent-hashing on a header keeps each key on one target, and a new target takes only some keys', async () => {
    const [a, b, c, d] = await targets(4);
    const rows = [{ target: a!.address }, { target: b!.address }, { target: c!.address }];
    load({ algorithm: 'consistent-hashing', hash_on: 'header', hash_on_header: 'x-user' }, rows);
    const users = Array.from({ length: 60 }, (_, i) => `user-${i}`);
    const before = new Map<string, string>();
    for (const u of users) {
      const [first, again] = await served(2, { 'x-user': u });
      expect(again).toBe(first);
      before.set(u, first!);
    }
    expect(new Set(before.values()).size).toBe(3);
    load({ algorithm: 'consistent-hashing', hash_on: 'header', hash_on_header: 'x-user' }, [...rows, { target: d!.address }]);
    let moved = 0;
    for (const u of users) {
      const [now] = await served(1, { 'x-user': u });
      if (now !== before.get(u)) {
        moved++;
        expect(now).toBe('t4');
      }
    }
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(users.length / 2);
  });

  it('hash_on cookie sets the cookie on the response and the cookie keeps the client on its target', async () => {
    await targets(3);
    load({ algorithm: 'consistent-hashing', hash_on: 'cookie', hash_on_cookie: 'lb-sticky', hash_on_cookie_path: '/lb' }, servers.map((s) => ({ target: s.address })));
    const first = await send(dp.port, '/lb');
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toMatch(/^lb-sticky=[0-9a-f-]{36}; Path=\/lb$/);
    const value = cookie.split(';')[0]!;
    for (let i = 0; i < 5; i++) {
      const again = await send(dp.port, '/lb', { headers: { cookie: value } });
      expect(again.json.target).toBe(first.json.target);
      expect(again.headers['set-cookie']).toBeUndefined();
    }
  });

  it('hashes on query_arg with hash_fallback to the client ip when the argument is missing', async () => {
    await targets(3);
    load({ algorithm: 'consistent-hashing', hash_on: 'query_arg', hash_on_query_arg: 'tenant', hash_fallback: 'ip' }, servers.map((s) => ({ target: s.address })));
    const byTenant = await served(3, {}, '/lb?tenant=acme');
    expect(new Set(byTenant).size).toBe(1);
    const byIp = await served(3);
    expect(new Set(byIp).size).toBe(1);
  });

  it('hashes on a uri capture of a regex route and on the consumer authentication chose', async () => {
    await targets(3);
    const u = makeUpstream({ name: 'cap.test', algorithm: 'consistent-hashing', hash_on: 'uri_capture', hash_on_uri_capture: 'tenant' });
    const byConsumer = makeUpstream({ name: 'who.test', algorithm: 'consistent-hashing', hash_on: 'consumer' });
    const capService = makeService({ name: 'cap', host: 'cap.test' });
    const whoService = makeService({ name: 'who', host: 'who.test' });
    const alice = makeConsumer({ username: 'alice' });
    const bob = makeConsumer({ username: 'bob' });
    holder.swap(
      compile(
        makeSnapshot({
          services: [capService, whoService],
          routes: [makeRoute({ paths: ['~/cap/(?<tenant>[a-z]+)'], service: { id: capService.id } }), makeRoute({ paths: ['/who'], service: { id: whoService.id } })],
          consumers: [alice, bob],
          plugins: [makePlugin({ name: 'key-auth', service: { id: whoService.id }, config: {} })],
          credentials: { keyauth_credentials: [makeCredential(alice, { key: 'alice-key' }), makeCredential(bob, { key: 'bob-key' })] },
          upstreams: [u, byConsumer],
          targets: [...servers.map((srv) => makeTarget(u, { target: srv.address })), ...servers.map((srv) => makeTarget(byConsumer, { target: srv.address }))],
        }),
      ),
    );
    const tenants = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell', 'cyberdyne', 'soylent', 'wonka', 'oscorp'];
    const placed = new Set<string>();
    for (const tenant of tenants) {
      const seen = new Set([...(await served(2, {}, `/cap/${tenant}/a`)), ...(await served(2, {}, `/cap/${tenant}/b`))]);
      expect(seen.size).toBe(1);
      placed.add([...seen][0]!);
    }
    expect(placed.size).toBeGreaterThan(1);
    for (const key of ['alice-key', 'bob-key']) expect(new Set(await served(4, { apikey: key }, '/who')).size).toBe(1);
  });

  it('least-connections sends new requests away from a target busy with a slow one', async () => {
    const both = await targets(2);
    for (const srv of both) srv.delayMs = 30_000;
    load({ algorithm: 'least-connections' }, both.map((srv) => ({ target: srv.address })));
    // equal load: the first request goes to one of them, which holds it
    const { request } = await import('node:http');
    const held = request({ host: '127.0.0.1', port: dp.port, path: '/lb', agent: false });
    held.on('error', () => undefined);
    held.end();
    await until(() => both.some((srv) => srv.hits === 1), 'one target to hold a request');
    const busy = both.find((srv) => srv.hits === 1)!;
    const idle = both.find((srv) => srv !== busy)!;
    idle.delayMs = 0;
    expect(await served(5)).toEqual(Array(5).fill(idle.name));
    held.destroy();
  });

  it('a client that leaves before the answer does not leave its request counted on the target', async () => {
    const [slow] = await targets(1);
    slow!.delayMs = 1000;
    load({ algorithm: 'least-connections' }, [{ target: slow!.address }]);
    const { request } = await import('node:http');
    const req = request({ host: '127.0.0.1', port: dp.port, path: '/lb', agent: false });
    req.on('error', () => undefined);
    req.end();
    const address = () => dp.balancers.get('lb.test')!.addresses[0]!;
    await until(() => address().active === 1, 'the request to be in flight');
    req.destroy();
    await until(() => address().active === 0, 'the count to drop when the client left');
  });

  it('latency prefers the target that answers faster', async () => {
    const [slow, fast] = await targets(2);
    slow!.delayMs = 200;
    load({ algorithm: 'latency' }, [{ target: slow!.address }, { target: fast!.address }]);
    const names = await served(20);
    expect(count(names.slice(10)).t2).toBe(10);
  });

  it('retries a connection failure on the next target, up to the service retries', async () => {
    const [a] = await targets(1);
    const closed = await closedPort();
    load({}, [{ target: `127.0.0.1:${closed}` }, { target: a!.address }], { retries: 1 });
    expect(await served(6)).toEqual(['t1', 't1', 't1', 't1', 't1', 't1']);
    load({}, [{ target: `127.0.0.1:${closed}` }, { target: a!.address }], { retries: 0 });
    expect((await served(2)).sort()).toEqual(['502', 't1']);
  });

  it('answers 503 when no target is available', async () => {
    load({}, []);
    const r = await send(dp.port, '/lb');
    expect(r.status).toBe(503);
    expect(r.json).toEqual({ message: 'failure to get a peer from the ring-balancer' });
    const [a] = await targets(1);
    load({}, [{ target: a!.address, weight: 0 }]);
    expect((await send(dp.port, '/lb')).status).toBe(503);
  });
});

describe('health checks', () => {
  it('passive: http failures open the circuit; active checks close it again', async () => {
    const [a, b] = await targets(2);
    b!.status = 500;
    b!.healthStatus = 500;
    load(
      // active checks only while unhealthy: passive detects, active recovers (a healthy-state probe would clear the counters)
      { healthchecks: { passive: { unhealthy: { http_failures: 2 } }, active: { http_path: '/health', healthy: { successes: 1 }, unhealthy: { interval: 0.05 } } } },
      [{ target: a!.address }, { target: b!.address }],
    );
    await until(async () => (await served(4)).every((n) => n === 't1'), 'the failing target to be skipped');
    const report = dp.balancers.healthReport();
    const health = Object.values(report)[0]!.targets.find((t) => t.target === b!.address)!.health;
    expect(health).toBe('UNHEALTHY');
    // once its health path answers 200, one active success brings it back
    b!.status = 200;
    b!.healthStatus = 200;
    await until(async () => (await served(4)).includes('t2'), 'the target to come back');
  });

  it('passive: tcp failures and timeouts count too', async () => {
    const [a, slow] = await targets(2);
    const closed = await closedPort();
    slow!.delayMs = 2500;
    load({ healthchecks: { passive: { unhealthy: { tcp_failures: 1, timeouts: 1 } } } }, [{ target: a!.address }, { target: slow!.address }, { target: `127.0.0.1:${closed}` }], {
      retries: 0,
      read_timeout: 300,
    });
    await until(async () => (await served(3)).every((n) => n === 't1'), 'the closed and slow targets to be skipped');
    const targetsHealth = Object.values(dp.balancers.healthReport())[0]!.targets.map((t) => `${t.target}=${t.health}`).sort();
    expect(targetsHealth).toEqual([`${a!.address}=HEALTHY`, `${slow!.address}=UNHEALTHY`, `127.0.0.1:${closed}=UNHEALTHY`].sort());
  });

  it('active: a target whose health path answers 500 goes unhealthy, and healthy again once it answers 200', async () => {
    const [a, b] = await targets(2);
    b!.healthStatus = 500;
    load({ healthchecks: { active: { http_path: '/health', healthy: { interval: 0.05, successes: 2 }, unhealthy: { interval: 0.05, http_failures: 2 } } } }, [
      { target: a!.address },
      { target: b!.address },
    ]);
    await until(() => dp.balancers.healthReport()[Object.keys(dp.balancers.healthReport())[0]!]!.targets.some((t) => t.health === 'UNHEALTHY'), 'b to be unhealthy');
    expect(await served(4)).toEqual(['t1', 't1', 't1', 't1']);
    b!.healthStatus = 200;
    await until(async () => (await served(4)).includes('t2'), 'b to be healthy again');
    expect(b!.healthChecks).toBeGreaterThanOrEqual(4);
  });

  it('manual unhealthy and healthy, per target and per address', async () => {
    const [a, b] = await targets(2);
    load({}, [{ target: a!.address }, { target: b!.address }]);
    const upstreamId = [...dp.balancers.all()][0]!.spec.id;
    expect(dp.balancers.applyManual({ upstream_id: upstreamId, target: b!.address, healthy: false })).toBe(true);
    expect(await served(4)).toEqual(['t1', 't1', 't1', 't1']);
    dp.balancers.applyManual({ upstream_id: upstreamId, target: b!.address, address: b!.address, healthy: true });
    expect((await served(4)).sort()).toEqual(['t1', 't1', 't2', 't2']);
  });
});

describe('targets by name', () => {
  it('resolves A records through the configured DNS server, follows TTL changes, and marks failures DNS_ERROR', async () => {
    const [a] = await targets(1);
    dns.set('one.lb.test', [{ address: '127.0.0.1', ttl: 1 }]);
    load({}, [{ target: `one.lb.test:${a!.port}` }, { target: 'missing.lb.test:80' }]);
    expect(await served(3)).toEqual(['t1', 't1', 't1']);
    expect(a!.lastHeaders!.host).toBe(`one.lb.test:${a!.port}`);
    const report = () => Object.values(dp.balancers.healthReport())[0]!.targets;
    await until(() => report().find((t) => t.target === 'missing.lb.test:80')?.health === 'DNS_ERROR', 'DNS_ERROR');
    const lookups = dns.queries.get('one.lb.test') ?? 0;
    // the 1 s TTL expires: the name is asked again
    await until(() => (dns.queries.get('one.lb.test') ?? 0) > lookups, 'a second lookup after the TTL');
    dns.delete('one.lb.test');
    await until(() => report().find((t) => t.target === `one.lb.test:${a!.port}`)?.health === 'DNS_ERROR', 'the name to fail');
    expect((await send(dp.port, '/lb')).status).toBe(503);
  });
});
