// Observability through the real processes, in both topologies (decisions 20 and 24): Kong's metrics after known
// traffic (exact deltas and label sets) on every data plane's status listener and on the admin API, every metric line
// read back by an independent parser, latency and request-id headers, the access log, and http-log batches reaching
// a collector that goes down and comes back.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  freePorts,
  prometheusSamples,
  sampleValue,
  startEchoUpstream,
  startLogCollector,
  type EchoUpstream,
  type LogCollector,
  type PrometheusSample,
  type SpawnedProcess,
  type TestDatabase,
  uniqueRedisPrefix,
  deleteRedisPrefix,
} from '@gatehouse/testkit';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { adminClient, proxied, spawnGatehouse, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const REQUEST_ID = /^[0-9a-f]{32}$/;

async function metricsText(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers });
  if (res.status !== 200) throw new Error(`${url}/metrics answered ${res.status}`);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

const scrape = async (url: string) => prometheusSamples(await metricsText(url));

/**
 * Every line of a scrape is either a HELP/TYPE comment or a sample of a declared family; the independent parser
 * reads the whole text; every family is Kong's or ours.
 */
function checkWholeScrape(text: string): void {
  const families = parsePrometheusTextFormat(text);
  expect(families.length).toBeGreaterThan(10);
  const declared = new Map(families.map((f) => [f.name, f.type]));
  for (const f of families) expect(f.name).toMatch(/^(kong|gatehouse)_/);
  const typed = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary']).toContain(comment[3]);
        typed.add(comment[2]!);
      }
      continue;
    }
    // values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case; prom-client writes `Nan`)
    expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|[Nn][Aa][Nn]|[+-][Ii][Nn][Ff])$/);
  }
  for (const sample of prometheusSamples(text)) {
    const family = [sample.name, sample.name.replace(/_(bucket|sum|count)$/, '')].find((n) => typed.has(n));
    expect(family).toBeDefined();
    expect(declared.has(family!)).toBe(true);
  }
}

const ok = { service: 'obs', route: 'obs-route', code: '200', source: 'service', workspace: 'default', consumer: 'alice' };
const refused = { service: 'obs', route: 'obs-route', code: '401', source: 'kong', workspace: 'default', consumer: '' };

describe.each(TOPOLOGIES)('observability (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let collector: LogCollector;
  let admin: ReturnType<typeof adminClient>;
  let dir: string;
  let cpStatusUrl: string | null = null;
  const accessLogOf = (i: number) => join(dir, `access-${i}.log`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-observe-${name}-`));
    upstream = await startEchoUpstream();
    collector = await startLogCollector();
    const [cpStatusPort] = await freePorts(1);
    if (name === 'cluster') cpStatusUrl = `http://127.0.0.1:${cpStatusPort}`;
    topology = await startTopology(name, {
      // the control plane's status listener (the data planes and `start` get their own port from the harness)
      env: { GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${cpStatusPort}` },
      dataPlaneEnv: (i) => ({ GATEHOUSE_ACCESS_LOG: accessLogOf(i) }),
    });
    admin = adminClient(topology.adminUrl);
    expect((await admin.post('/services/', { name: 'obs', url: upstream.url })).status).toBe(201);
    expect((await admin.post('/services/obs/routes', { name: 'obs-route', 'paths[]': '/obs' })).status).toBe(201);
    expect((await admin.post('/services/obs/plugins', { name: 'key-auth' })).status).toBe(201);
    const prometheus = await admin.post('/services/obs/plugins', {
      name: 'prometheus',
      'config.per_consumer': 'true',
      'config.status_code_metrics': 'true',
      'config.latency_metrics': 'true',
      'config.bandwidth_metrics': 'true',
    });
    expect(prometheus.status).toBe(201);
    const httpLog = await admin.post('/routes/obs-route/plugins', {
      name: 'http-log',
      'config.http_endpoint': collector.url,
      'config.queue.max_batch_size': '2',
      'config.queue.max_coalescing_delay': '0.2',
      'config.queue.initial_retry_delay': '0.05',
      'config.queue.max_retry_delay': '0.2',
    });
    expect(httpLog.status).toBe(201);
    expect(httpLog.body.config.queue).toMatchObject({ max_batch_size: 2, max_coalescing_delay: 0.2, max_entries: 10000 });
    expect((await admin.post('/consumers/', { username: 'alice' })).status).toBe(201);
    expect((await admin.post('/consumers/alice/key-auth', { key: 'alice-key' })).status).toBe(201);
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      () => collector?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('counts exactly the known traffic on each data plane\'s /metrics, with Kong\'s label set', async () => {
    for (const dp of topology.dataPlanes) {
      const before = await scrape(dp.statusUrl);
      for (let i = 0; i < 3; i++) expect((await proxied(`${dp.proxyUrl}/obs/a`, { headers: { apikey: 'alice-key' } })).status).toBe(200);
      expect((await proxied(`${dp.proxyUrl}/obs/a`, { headers: { apikey: 'nope' } })).status).toBe(401);
      let after: PrometheusSample[] = before;
      const latency = { service: 'obs', route: 'obs-route', workspace: 'default' };
      await waitUntil('the four requests in the metrics', async () => {
        after = await scrape(dp.statusUrl);
        return sampleValue(after, 'kong_request_latency_ms_count', latency) - sampleValue(before, 'kong_request_latency_ms_count', latency) >= 4;
      });
      expect(sampleValue(after, 'kong_http_requests_total', ok) - sampleValue(before, 'kong_http_requests_total', ok)).toBe(3);
      expect(sampleValue(after, 'kong_http_requests_total', refused) - sampleValue(before, 'kong_http_requests_total', refused)).toBe(1);
      expect(sampleValue(after, 'kong_request_latency_ms_count', latency) - sampleValue(before, 'kong_request_latency_ms_count', latency)).toBe(4);
      expect(sampleValue(after, 'kong_upstream_latency_ms_count', latency) - sampleValue(before, 'kong_upstream_latency_ms_count', latency)).toBe(3);
      expect(sampleValue(after, 'kong_kong_latency_ms_count', latency) - sampleValue(before, 'kong_kong_latency_ms_count', latency)).toBe(4);
      const requests = after.filter((s) => s.name === 'kong_http_requests_total');
      expect(requests.length).toBeGreaterThan(0);
      for (const s of requests) expect(Object.keys(s.labels)).toEqual(['service', 'route', 'code', 'source', 'workspace', 'consumer']);
      for (const s of after.filter((x) => x.name === 'kong_bandwidth_bytes')) expect(Object.keys(s.labels)).toEqual(['service', 'route', 'direction', 'workspace', 'consumer']);
      expect(sampleValue(after, 'kong_bandwidth_bytes', { service: 'obs', route: 'obs-route', direction: 'egress', workspace: 'default', consumer: 'alice' })).toBeGreaterThan(0);
      const status = await getJson(`${dp.statusUrl}/status`);
      expect(sampleValue(after, 'gatehouse_data_plane_config_version')).toBe(status.config_version);
      expect(sampleValue(after, 'kong_nginx_connections_total', { node_id: status.node_id, subsystem: 'http', state: 'accepted' })).toBeGreaterThan(0);
      expect(sampleValue(after, 'kong_node_info', { node_id: status.node_id })).toBe(1);
      // a data plane of the cluster reaches Redis; the embedded node has none, and no such series
      if (name === 'cluster') expect(sampleValue(after, 'gatehouse_redis_reachable')).toBe(1);
      else expect(after.some((s) => s.name === 'gatehouse_redis_reachable')).toBe(false);
    }
  });

  it('serves the control plane\'s view on the admin API /metrics (both planes with `start`)', async () => {
    const samples = await scrape(topology.adminUrl);
    expect(sampleValue(samples, 'kong_datastore_reachable')).toBe(1);
    const planes = (await admin.get('/clustering/data-planes')).body.data as Array<{ id: string; config_hash: string; last_seen: number }>;
    expect(planes.length).toBe(topology.dataPlanes.length);
    for (const p of planes) {
      const series = samples.filter((s) => s.name === 'kong_data_plane_config_hash' && s.labels.node_id === p.id);
      expect(series).toHaveLength(1);
      expect(Object.keys(series[0]!.labels)).toEqual(['node_id', 'hostname', 'ip']);
      expect(series[0]!.value).toBe(Number(BigInt(`0x${p.config_hash}`)));
      expect(sampleValue(samples, 'kong_data_plane_last_seen', { node_id: p.id })).toBeGreaterThan(0);
    }
    const { config_version: version } = await getJson(`${topology.dataPlanes[0]!.statusUrl}/status`);
    expect(sampleValue(samples, 'gatehouse_control_plane_config_version')).toBe(version);
    if (name === 'embedded') {
      // one registry per node: the admin API shows the data plane's series too
      expect(sampleValue(samples, 'kong_http_requests_total', ok)).toBe(sampleValue(await scrape(topology.dataPlanes[0]!.statusUrl), 'kong_http_requests_total', ok));
      expect(sampleValue(samples, 'gatehouse_data_plane_config_version')).toBe(version);
    } else {
      expect(samples.some((s) => s.name === 'kong_http_requests_total')).toBe(false);
    }
    expect(samples.some((s) => s.name === 'gatehouse_process_resident_memory_bytes' || s.name === 'gatehouse_nodejs_heap_size_used_bytes')).toBe(true);
  });

  it('every line of every /metrics is valid Prometheus text, read back by an independent parser', async () => {
    const urls = [topology.adminUrl, ...topology.dataPlanes.map((dp) => dp.statusUrl), ...(cpStatusUrl ? [cpStatusUrl] : [])];
    for (const url of urls) checkWholeScrape(await metricsText(url));
  });

  it('stamps latency headers and a request id that the upstream and the access log share', async () => {
    for (const [i, dp] of topology.dataPlanes.entries()) {
      const res = await proxied(`${dp.proxyUrl}/obs/headers?x=1`, { headers: { apikey: 'alice-key' } });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-kong-request-id');
      expect(id).toMatch(REQUEST_ID);
      expect(res.body.headers['x-kong-request-id']).toBe(id);
      expect(res.headers.get('x-kong-upstream-latency')).toMatch(/^\d+$/);
      expect(res.headers.get('x-kong-proxy-latency')).toMatch(/^\d+$/);
      expect(res.headers.get('via')).toMatch(/^1\.1 gatehouse\/\d+\.\d+\.\d+$/);
      const refusedRes = await proxied(`${dp.proxyUrl}/obs/headers`);
      expect(refusedRes.status).toBe(403);
      expect(refusedRes.headers.get('x-kong-response-latency')).toMatch(/^\d+$/);
      expect(refusedRes.headers.get('x-kong-request-id')).toMatch(REQUEST_ID);

      let line: any;
      await waitUntil(`the access log line of ${id}`, () => {
        if (!existsSync(accessLogOf(i))) return false;
        line = readFileSync(accessLogOf(i), 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l)).find((l) => l.request_id === id);
        return line !== undefined;
      });
      expect(line).toMatchObject({ client_ip: '127.0.0.1', method: 'GET', path: '/obs/headers', query: 'x=1', status: 200, route: 'obs-route', service: 'obs', consumer: 'alice', upstream: `127.0.0.1:${upstream.port}`, source: 'service' });
      expect(line.latencies.proxy).toBe(Number(res.headers.get('x-kong-upstream-latency')));
      expect(line.bytes.response).toBeGreaterThan(0);
    }
  });

  it('reopens the access log file on SIGUSR1, so a rotated log continues in a new file', async () => {
    const dp = topology.dataPlanes[0]!;
    const file = accessLogOf(0);
    const lineOf = (path: string, id: string | null) =>
      existsSync(path) && readFileSync(path, 'utf8').split('\n').slice(0, -1).some((l) => JSON.parse(l).request_id === id);
    const before = (await proxied(`${dp.proxyUrl}/obs/before`, { headers: { apikey: 'alice-key' } })).headers.get('x-kong-request-id');
    await waitUntil('the line before rotation', () => lineOf(file, before));
    renameSync(file, `${file}.1`);
    dp.process.signal('SIGUSR1');
    // the signal is handled asynchronously: keep sending until a request lands in a new file
    await waitUntil('a line in a new access log file', async () => {
      const id = (await proxied(`${dp.proxyUrl}/obs/after`, { headers: { apikey: 'alice-key' } })).headers.get('x-kong-request-id');
      await new Promise((r) => setTimeout(r, 100));
      return lineOf(file, id);
    });
    expect(lineOf(`${file}.1`, before)).toBe(true);
  });

  it('http-log delivers batches to the collector, and keeps them while the collector is down', async () => {
    const dp = topology.dataPlanes[0]!;
    const first: Array<string | null> = [];
    for (let i = 0; i < 2; i++) first.push((await proxied(`${dp.proxyUrl}/obs/log-${i}`, { headers: { apikey: 'alice-key' } })).headers.get('x-kong-request-id'));
    const delivered = () => collector.received.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body]) as any[]);
    await waitUntil('the first batch', () => first.every((id) => delivered().some((e) => e.request.id === id)));
    const batch = collector.received.find((r) => Array.isArray(r.body) && (r.body as any[]).some((e) => e.request.id === first[0]))!;
    expect((batch.body as any[]).length).toBeGreaterThanOrEqual(1);
    const entry = delivered().find((e) => e.request.id === first[0]);
    expect(entry).toMatchObject({ response: { status: 200 }, route: { name: 'obs-route' }, service: { name: 'obs' }, consumer: { username: 'alice' }, client_ip: '127.0.0.1', upstream_uri: '/log-0' });

    await collector.stop();
    const later: Array<string | null> = [];
    for (let i = 0; i < 3; i++) later.push((await proxied(`${dp.proxyUrl}/obs/later-${i}`, { headers: { apikey: 'alice-key' } })).headers.get('x-kong-request-id'));
    await waitUntil('the queue to hold the entries', async () => {
      const samples = await scrape(dp.statusUrl);
      return samples.some((s) => s.name === 'gatehouse_log_queue_entries' && s.value >= 1);
    });
    await collector.start();
    await waitUntil('the entries kept while the collector was down', () => later.every((id) => delivered().some((e) => e.request.id === id)), 30_000);
  });

  it('keeps the control plane\'s status listener free of tokens and ready (cluster)', async () => {
    if (cpStatusUrl === null) return;
    const ready = await fetch(`${cpStatusUrl}/status/ready`);
    expect(ready.status).toBe(200);
    const status = await getJson(`${cpStatusUrl}/status`);
    expect(status.database).toEqual({ reachable: true });
    expect(sampleValue(await scrape(cpStatusUrl), 'kong_datastore_reachable')).toBe(1);
  });
});

describe('control plane status listener with RBAC enforced', () => {
  let database: TestDatabase;
  let cp: SpawnedProcess;
  let adminUrl: string;
  let statusUrl: string;
  const token = 'observability-admin-token-0123456789';
  const statusRedisPrefix = uniqueRedisPrefix('e2e-status');
  let statusDataDir: string | null = null;

  beforeAll(async () => {
    database = await createTestDatabase({ prefix: 'gh_e2e_status' });
    const [adminPort, statusPort] = await freePorts(2);
    adminUrl = `http://127.0.0.1:${adminPort}`;
    statusUrl = `http://127.0.0.1:${statusPort}`;
    cp = await spawnGatehouse(
      'control-plane',
      {
        DATABASE_URL: database.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        GATEHOUSE_REDIS_PREFIX: statusRedisPrefix,
        GATEHOUSE_CLUSTER_SECRET: 'observability-cluster-secret-0123456789abcdef',
        GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        GATEHOUSE_ENFORCE_RBAC: 'on',
        GATEHOUSE_ADMIN_TOKEN: token,
        GATEHOUSE_DATA_DIR: (statusDataDir = mkdtempSync(join(tmpdir(), 'gh-e2e-status-'))),
      },
      /admin API listening/,
    );
  });

  afterAll(async () => {
    await cleanUp(
      () => cp?.stop(),
      () => database?.drop(),
      () => deleteRedisPrefix('redis://127.0.0.1:6379', statusRedisPrefix),
      () => statusDataDir !== null && rmSync(statusDataDir, { recursive: true, force: true }),
    );
  });

  it('answers /status, /status/ready and /metrics without a token while the admin API asks for one', async () => {
    expect((await fetch(`${adminUrl}/status`)).status).toBe(401);
    expect((await fetch(`${adminUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${adminUrl}/metrics`, { headers: { 'Kong-Admin-Token': token } })).status).toBe(200);
    await waitUntil('readiness', async () => (await fetch(`${statusUrl}/status/ready`)).status === 200);
    expect((await fetch(`${statusUrl}/status`)).status).toBe(200);
    expect(sampleValue(await scrape(statusUrl), 'kong_datastore_reachable')).toBe(1);
  });
});
