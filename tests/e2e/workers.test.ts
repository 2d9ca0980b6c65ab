// A data plane on several cores (GATEHOUSE_WORKERS=2), as real processes in both topologies: the workers share the
// proxy port, `/status` and `/metrics` count for the node, the node's state (local rate-limit counters, the memory
// proxy-cache) is one for both workers, config changes reach every worker, a killed worker is replaced while the
// node keeps serving, and stopping the node stops its workers. Each request here opens its own connection, so the
// primary hands them to the workers in turn; `/status` lists each worker's own count, which shows where they went.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isAlive, prometheusSamples, startEchoUpstream, startTargetServer, type EchoUpstream, type TargetServer } from '@gatehouse/testkit';
import { getJson, waitUntil } from './support/helpers';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

interface Fresh {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on a connection of its own (no keep-alive), so successive requests meet the workers in turn. */
function fresh(url: string, headers: Record<string, string> = {}): Promise<Fresh> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: 10_000, headers: { connection: 'close', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.end();
  });
}

interface WorkerCount {
  pid: number;
  total_requests: number;
}

describe.each(TOPOLOGIES)('proxy workers (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let healthy: TargetServer;
  let failing: TargetServer;
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
  const proxy = (path: string) => `${topology.proxyUrl}${path}`;
  const status = () => getJson(`${topology.dataPlanes[0]!.statusUrl}/status`);
  const workers = async (): Promise<WorkerCount[]> => (await status()).workers;
  /** requests each worker served since `before` (by pid) */
  const servedSince = async (before: WorkerCount[]) => {
    const now = await workers();
    return now.map((w) => w.total_requests - (before.find((b) => b.pid === w.pid)?.total_requests ?? 0));
  };

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    healthy = await startTargetServer('healthy');
    failing = await startTargetServer('failing', { status: 500 });
    topology = await startTopology(name, { dataPlanes: 1, dataPlaneEnv: { GATEHOUSE_WORKERS: '2', GATEHOUSE_ACCESS_LOG: 'off' } });
    await created('/plugins', { name: 'prometheus', config: { status_code_metrics: true } });
    await created('/services', { name: 'echo', url: `${upstream.url}/` });
    await created('/services/echo/routes', { name: 'keyed', paths: ['/keyed'] });
    await created('/routes/keyed/plugins', { name: 'key-auth' });
    await created('/consumers', { username: 'alice' });
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/services/echo/routes', { name: 'limited', paths: ['/limited'] });
    await created('/routes/limited/plugins', { name: 'rate-limiting', config: { minute: 5, policy: 'local' } });
    await created('/services/echo/routes', { name: 'cached', paths: ['/cached'] });
    await created('/routes/cached/plugins', { name: 'proxy-cache', config: { strategy: 'memory', content_type: ['application/json'] } });
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
    await healthy?.close();
    await failing?.close();
  });

  it('two workers serve one port; /status and /metrics count the requests of both', async () => {
    const before = await workers();
    expect(before).toHaveLength(2);
    for (let i = 0; i < 10; i++) expect((await fresh(proxy('/keyed/a'), { apikey: 'alice-key' })).status).toBe(200);
    const served = await servedSince(before);
    expect(served.every((n) => n > 0)).toBe(true);
    expect(served.reduce((a, b) => a + b, 0)).toBe(10);

    const node = await status();
    const perWorker = (node.workers as WorkerCount[]).reduce((sum, w) => sum + w.total_requests, 0);
    expect(node.server.total_requests).toBe(perWorker);
    const metrics = prometheusSamples(await (await fetch(`${topology.dataPlanes[0]!.statusUrl}/metrics`)).text());
    const keyed = metrics.filter((m) => m.name === 'kong_http_requests_total' && m.labels.route === 'keyed');
    expect(keyed.reduce((sum, m) => sum + m.value, 0)).toBe(10);
    const nginx = metrics.find((m) => m.name === 'kong_nginx_requests_total');
    expect(nginx?.value).toBeGreaterThanOrEqual(perWorker);
    // one node: its info once, its config version that of the whole node
    expect(metrics.filter((m) => m.name === 'kong_node_info')).toHaveLength(1);
    expect(metrics.find((m) => m.name === 'gatehouse_data_plane_config_version')?.value).toBe(node.config_version);
  });

  it('a local rate limit of 5 per minute holds for the node: exactly 5 of 12 requests pass, across both workers', async () => {
    // the 12 requests stay inside one minute's window
    await waitUntil('a minute with time to spare', () => new Date().getSeconds() < 45, 20_000, 200);
    const before = await workers();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await fresh(proxy('/limited/x'))).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
  });

  it('the memory proxy-cache is the node’s: an entry one worker stored is a hit on the other', async () => {
    const first = await fresh(proxy('/cached/item'));
    expect(first.headers['x-cache-status']).toBe('Miss');
    const reachedBefore = upstream.received.filter((r) => r.path === '/item').length;
    const before = await workers();
    for (let i = 0; i < 6; i++) expect((await fresh(proxy('/cached/item'))).headers['x-cache-status']).toBe('Hit');
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
    expect(upstream.received.filter((r) => r.path === '/item').length).toBe(reachedBefore);
  });

  it('a config change reaches every worker', async () => {
    await created('/consumers', { username: 'bob' });
    await created('/consumers/bob/key-auth', { key: 'bob-key' });
    await topology.converge();
    const before = await workers();
    for (let i = 0; i < 6; i++) expect((await fresh(proxy('/keyed/b'), { apikey: 'bob-key' })).status).toBe(200);
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
  });

  it('passive health is counted for the node: two failures open the circuit, whichever workers saw them', async () => {
    await created('/upstreams', { name: 'passive.workers', healthchecks: { passive: { unhealthy: { http_failures: 2 } } } });
    await created('/upstreams/passive.workers/targets', { target: healthy.address });
    await created('/upstreams/passive.workers/targets', { target: failing.address });
    await created('/services', { name: 'passive', host: 'passive.workers' });
    await created('/services/passive/routes', { name: 'passive', paths: ['/passive'] });
    await topology.converge();
    const before = await workers();
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++) statuses.push((await fresh(proxy('/passive'))).status);
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
    // counted per worker, the circuit would open only after two failures on each worker (4); counted for the node,
    // after two in all (one more may be in flight while the primary tells the workers)
    expect(failing.hits).toBeGreaterThanOrEqual(2);
    expect(failing.hits).toBeLessThanOrEqual(3);
    expect(statuses.slice(-8)).toEqual(Array(8).fill(200));
    await waitUntil('the node to report the failing target unhealthy', async () => {
      const health = await getJson(`${topology.adminUrl}/upstreams/passive.workers/health`);
      return health.data.some((t: { target: string; health: string }) => t.target === failing.address && t.health === 'UNHEALTHY');
    });
  });

  it('a worker killed by its PID is replaced, and the node keeps serving', async () => {
    const counted = (await status()).server.total_requests as number;
    const [victim, survivor] = await workers();
    const offset = topology.dataPlanes[0]!.process.output().length;
    process.kill(victim!.pid, 'SIGKILL');
    // once the primary knows (a connection handed to the worker in the instant it died is lost with it), the other
    // worker takes every request while the replacement starts
    await topology.dataPlanes[0]!.process.waitForOutput(/proxy worker exited; starting a replacement/, 5_000, offset);
    for (let i = 0; i < 4; i++) expect((await fresh(proxy('/keyed/c'), { apikey: 'alice-key' })).status).toBe(200);
    await waitUntil(
      'a replacement worker',
      async () => {
        const now = await workers();
        return now.length === 2 && !now.some((w) => w.pid === victim!.pid) && now.some((w) => w.pid === survivor!.pid);
      },
      30_000,
      100,
    );
    const before = await workers();
    for (let i = 0; i < 6; i++) expect((await fresh(proxy('/keyed/d'), { apikey: 'alice-key' })).status).toBe(200);
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
    // the node's count keeps what the dead worker had served (as of its last report)
    expect((await status()).server.total_requests).toBeGreaterThanOrEqual(counted + 10);
  });

  it('a log level changed at run time holds in every worker, and in a worker started after it', async () => {
    const node = topology.dataPlanes[0]!.process;
    const applied = (from: number) =>
      node
        .output()
        .slice(from)
        .split('\n')
        .filter((line) => line.includes('"message":"proxy worker applied the configuration"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
    // Kong's paths: this node alone with `start`, every node over the bus in a cluster
    const path = name === 'embedded' ? '/debug/node/log-level' : '/debug/cluster/log-level';
    const setLevel = async (level: string) => {
      const res = await fetch(`${topology.adminUrl}${path}/${level}?timeout=0`, { method: 'PUT' });
      expect(await res.json()).toEqual({ message: 'log level changed' });
    };
    // at the configured level (warn) a worker's debug lines are not written
    const quiet = node.output().length;
    await created('/consumers', { username: 'carol' });
    await created('/consumers/carol/key-auth', { key: 'carol-key' });
    await topology.converge();
    // both workers serve carol's key: both applied that configuration
    const before = await workers();
    for (let i = 0; i < 6; i++) expect((await fresh(proxy('/keyed/q'), { apikey: 'carol-key' })).status).toBe(200);
    expect((await servedSince(before)).every((n) => n > 0)).toBe(true);
    expect(applied(quiet)).toEqual([]);
    await setLevel('debug');
    const loud = node.output().length;
    await created('/consumers', { username: 'dave' });
    await topology.converge();
    const pids = (await workers()).map((w) => w.pid).sort();
    await waitUntil('a debug line from every worker', () => pids.every((pid) => applied(loud).includes(pid)), 15_000, 50);
    // a worker started while the level holds starts with it
    process.kill(pids[0]!, 'SIGKILL');
    await waitUntil('a replacement worker', async () => (await workers()).length === 2 && !(await workers()).some((w) => w.pid === pids[0]), 30_000, 100);
    const replacement = (await workers()).find((w) => !pids.includes(w.pid))!.pid;
    const after = node.output().length;
    await created('/consumers', { username: 'erin' });
    await topology.converge();
    await waitUntil('a debug line from the replacement', () => applied(after).includes(replacement), 15_000, 50);
    // back to warn: the workers stop writing them
    await setLevel('warn');
    await waitUntil('the level back to warn', async () => (await getJson(`${topology.adminUrl}/debug/node/log-level`)).message === 'log level: warn');
  });

  it('stopping the node stops its workers', async () => {
    const pids = (await workers()).map((w) => w.pid);
    await topology.dataPlanes[0]!.process.stop();
    await waitUntil('every worker gone', () => pids.every((pid) => !isAlive(pid)), 10_000);
  });
});
