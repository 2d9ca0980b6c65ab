// Latency and request-id headers, the access log, Kong's metrics with the prometheus plugin, and the logging plugins
// (correlation-id, file-log, http-log), through a real data plane, echo upstream and log collector.
import { mkdtempSync, readFileSync, renameSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Snapshot } from '@gatehouse/core';
import { bundledPlugins, definePlugin, findPlugin, openPlugins, PluginQueues, prometheusConfigSchema, type PluginDefinition, type PluginResources } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, makeTarget, makeUpstream, startEchoUpstream, startLogCollector, startTargetServer, prometheusSamples, sampleValue, type EchoUpstream, type LogCollector, type PrometheusSample } from '@gatehouse/testkit';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import type { IncomingMessage } from 'node:http';
import { AccessLog, compile, ConfigHolder, createDataPlaneServer, DataPlaneMetrics, parseGatewayHeaders, type DataPlaneServer, type ForwarderKind } from '../src';
import { closedPort, quietLog, send } from './harness';

const REQUEST_ID = /^[0-9a-f]{32}$/;

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Gateway {
  dp: DataPlaneServer;
  registry: Registry;
  metrics: DataPlaneMetrics;
  accessLog: AccessLog | null;
  holder: ConfigHolder;
  queues: PluginQueues;
  plugins: PluginResources;
}

async function gateway(snapshot: Snapshot, opts: { headers?: string; accessLog?: string; forwarder?: ForwarderKind } = {}): Promise<Gateway> {
  const holder = new ConfigHolder(compile(snapshot));
  const registry = new Registry();
  const queues = new PluginQueues({ error: () => {}, warn: () => {}, info: () => {} });
  const metrics = new DataPlaneMetrics({ registry, nodeId: 'node-1', holder, queues });
  const accessLog = opts.accessLog ? new AccessLog(opts.accessLog) : null;
  const runtime = { log: quietLog, queues };
  const plugins = await openPlugins(runtime, bundledPlugins);
  const dp = await createDataPlaneServer({
    holder,
    listen: { host: '127.0.0.1', port: 0 },
    forwarder: opts.forwarder,
    log: quietLog,
    runtime,
    headers: parseGatewayHeaders(opts.headers ?? 'server_tokens, latency_tokens, X-Kong-Request-Id', 'gatehouse/test'),
    accessLog,
    metrics,
  });
  return { dp, registry, metrics, accessLog, holder, queues, plugins };
}

interface Scrape {
  families: ParsedFamily[];
  samples: PrometheusSample[];
}

/** one scrape, read by an independent parser (families, types) and line by line (exact sample values) */
async function scrape(registry: Registry): Promise<Scrape> {
  const text = await registry.metrics();
  return { families: parsePrometheusTextFormat(text), samples: prometheusSamples(text) };
}

function sample(scraped: Scrape, name: string, labels: Record<string, string>): number {
  return sampleValue(scraped.samples, name, labels);
}

/** exchanges are recorded once their response is done, just after the client has it: poll until `ready` holds */
async function scrapeUntil(registry: Registry, ready: (s: Scrape) => boolean): Promise<Scrape> {
  let last = await scrape(registry);
  const until = Date.now() + 15_000;
  while (!ready(last)) {
    if (Date.now() > until) throw new Error('timed out waiting for the metrics to show the requests');
    await new Promise((r) => setTimeout(r, 20));
    last = await scrape(registry);
  }
  return last;
}

/** the access log line of one request, once written */
async function accessLine(file: string, requestId: unknown): Promise<any> {
  let found: any;
  await waitFor(`the access log line of ${String(requestId)}`, () => {
    if (!existsSync(file)) return false;
    // a batch may be half written when read: only whole lines count
    found = readFileSync(file, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l)).find((l) => l.request_id === requestId);
    return found !== undefined;
  });
  return found;
}

/** A WebSocket upgrade: the head of the answer (101 or a refusal) and, once open, the upstream's first message. */
function upgrade(port: number, path: string, headers: Record<string, string> = {}): Promise<{ response: IncomingMessage; first: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    let response: IncomingMessage | null = null;
    ws.once('upgrade', (res) => (response = res));
    ws.once('message', (data) => {
      ws.close();
      resolve({ response: response!, first: JSON.parse(data.toString()) });
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve({ response: res, first: null });
    });
    ws.once('error', reject);
  });
}

describe.each(['http1', 'undici', 'http-proxy'] as const)('gateway headers (%s)', (forwarder) => {
  let echo: EchoUpstream;
  let gw: Gateway;
  let off: Gateway;
  let idOnly: Gateway;

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const svc = makeService({ name: 'svc', url: echo.url });
    const down = makeService({ name: 'down', url: `http://127.0.0.1:${await closedPort()}` });
    const routes = [
      makeRoute({ name: 'ok', paths: ['/ok'], service: { id: svc.id } }),
      makeRoute({ name: 'gone', paths: ['/gone'], service: { id: svc.id } }),
      makeRoute({ name: 'down', paths: ['/down'], service: { id: down.id } }),
    ];
    const snapshot = makeSnapshot({
      services: [svc, down],
      routes,
      plugins: [makePlugin({ name: 'request-termination', route: { id: routes[1]!.id }, config: { status_code: 410, message: 'gone' } })],
    });
    gw = await gateway(snapshot, { forwarder });
    off = await gateway(snapshot, { forwarder, headers: 'off' });
    idOnly = await gateway(snapshot, { forwarder, headers: 'X-Kong-Request-Id' });
  });

  afterAll(async () => {
    await Promise.all([gw.dp.close(), off.dp.close(), idOnly.dp.close()]);
    await echo.close();
  });

  it('stamps proxied responses with latencies, the request id (also sent upstream) and Via after the upstream\'s own', async () => {
    const res = await send(gw.dp.port, '/ok/a', { headers: { 'x-kong-request-id': 'client-chosen', via: '1.0 client' } });
    expect(res.status).toBe(200);
    expect(res.headers['x-kong-upstream-latency']).toMatch(/^\d+$/);
    expect(res.headers['x-kong-proxy-latency']).toMatch(/^\d+$/);
    expect(res.headers['x-kong-response-latency']).toBeUndefined();
    expect(res.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    expect(res.headers.via).toBe('1.1 gatehouse/test');
    expect(res.json.headers['x-kong-request-id']).toBe(res.headers['x-kong-request-id']);
    const second = await send(gw.dp.port, '/ok/a');
    expect(second.headers['x-kong-request-id']).not.toBe(res.headers['x-kong-request-id']);
  });

  it('stamps the gateway\'s own answers (no route, a plugin, an unreachable upstream) with X-Kong-Response-Latency and Server', async () => {
    for (const [path, status] of [['/nothing', 404], ['/gone', 410], ['/down', 502]] as const) {
      const res = await send(gw.dp.port, path);
      expect(res.status).toBe(status);
      expect(res.headers['x-kong-response-latency']).toMatch(/^\d+$/);
      expect(res.headers['x-kong-request-id']).toMatch(REQUEST_ID);
      expect(res.headers.server).toBe('gatehouse/test');
      expect(res.headers['x-kong-upstream-latency']).toBeUndefined();
      expect(res.headers.via).toBeUndefined();
    }
  });

  it('adds none of them with GATEHOUSE_HEADERS=off, yet the upstream still gets the request id', async () => {
    const res = await send(off.dp.port, '/ok/a');
    for (const name of ['x-kong-upstream-latency', 'x-kong-proxy-latency', 'x-kong-request-id', 'via']) expect(res.headers[name]).toBeUndefined();
    expect(res.json.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    const refused = await send(off.dp.port, '/nothing');
    for (const name of ['x-kong-response-latency', 'x-kong-request-id', 'server']) expect(refused.headers[name]).toBeUndefined();
  });

  it('stamps a WebSocket 101 like any proxied response; the upstream gets the same request id', async () => {
    const { response, first } = await upgrade(gw.dp.port, '/ok/socket');
    expect(response.statusCode).toBe(101);
    expect(response.headers['x-kong-upstream-latency']).toMatch(/^\d+$/);
    expect(response.headers['x-kong-proxy-latency']).toMatch(/^\d+$/);
    expect(response.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    expect(response.headers.via).toBe('1.1 gatehouse/test');
    expect(response.headers.upgrade).toBe('websocket');
    expect(first.headers['x-kong-request-id']).toBe(response.headers['x-kong-request-id']);
  });

  it('stamps a refused upgrade like the gateway\'s own answers', async () => {
    for (const [path, status] of [['/nothing', 404], ['/gone', 410]] as const) {
      const { response } = await upgrade(gw.dp.port, path);
      expect(response.statusCode).toBe(status);
      expect(response.headers['x-kong-response-latency']).toMatch(/^\d+$/);
      expect(response.headers['x-kong-request-id']).toMatch(REQUEST_ID);
      expect(response.headers.server).toBe('gatehouse/test');
      expect(response.headers.via).toBeUndefined();
    }
  });

  it('stamps upgrades as GATEHOUSE_HEADERS chooses: none with off, only the request id when listed alone', async () => {
    const quiet = await upgrade(off.dp.port, '/ok/socket');
    expect(quiet.response.statusCode).toBe(101);
    for (const name of ['x-kong-upstream-latency', 'x-kong-proxy-latency', 'x-kong-request-id', 'via']) expect(quiet.response.headers[name]).toBeUndefined();
    expect(quiet.first.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    const refused = await upgrade(off.dp.port, '/nothing');
    for (const name of ['x-kong-response-latency', 'x-kong-request-id', 'server']) expect(refused.response.headers[name]).toBeUndefined();
    const listed = await upgrade(idOnly.dp.port, '/ok/socket');
    expect(listed.response.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    for (const name of ['x-kong-upstream-latency', 'x-kong-proxy-latency', 'via']) expect(listed.response.headers[name]).toBeUndefined();
  });

  it('adds only the listed headers', async () => {
    const res = await send(idOnly.dp.port, '/ok/a');
    expect(res.headers['x-kong-request-id']).toMatch(REQUEST_ID);
    for (const name of ['x-kong-upstream-latency', 'x-kong-proxy-latency', 'via']) expect(res.headers[name]).toBeUndefined();
  });
});

describe('GATEHOUSE_HEADERS parsing', () => {
  it('knows Kong\'s tokens and names, and refuses the rest', () => {
    expect(parseGatewayHeaders('latency_tokens', 'g')).toMatchObject({ proxyLatency: true, upstreamLatency: true, responseLatency: true, via: false, server: false, requestId: false });
    expect(parseGatewayHeaders('server_tokens', 'g')).toMatchObject({ via: true, server: true, proxyLatency: false });
    expect(parseGatewayHeaders('Via, X-Kong-Upstream-Latency', 'g')).toMatchObject({ via: true, upstreamLatency: true, server: false, proxyLatency: false });
    expect(parseGatewayHeaders('off', 'g')).toMatchObject({ via: false, server: false, requestId: false, proxyLatency: false });
    expect(() => parseGatewayHeaders('X-Nope', 'g')).toThrow("GATEHOUSE_HEADERS: invalid header name 'X-Nope'");
    expect(() => parseGatewayHeaders('off, Via', 'g')).toThrow('cannot be mixed');
  });
});

describe('access log and Kong metrics', () => {
  let echo: EchoUpstream;
  let gw: Gateway;
  let dir: string;
  let serviceId: string;
  let snapshot: Snapshot;
  const alice = makeConsumer({ username: 'alice' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-observe-'));
    echo = await startEchoUpstream();
    const svc = makeService({ name: 'metered', url: echo.url });
    const plain = makeService({ name: 'plain', url: echo.url });
    serviceId = svc.id;
    const routes = [
      makeRoute({ name: 'metered-route', paths: ['/metered'], service: { id: svc.id } }),
      makeRoute({ name: 'plain-route', paths: ['/plain'], service: { id: plain.id } }),
    ];
    snapshot = makeSnapshot({
        services: [svc, plain],
        routes,
        consumers: [alice],
        plugins: [
          makePlugin({ name: 'key-auth', service: { id: svc.id } }),
          makePlugin({ name: 'prometheus', service: { id: svc.id }, config: { per_consumer: true, status_code_metrics: true, latency_metrics: true, bandwidth_metrics: true } }),
        ],
        credentials: { keyauth_credentials: [makeCredential(alice, { key: 'alice-key' })] },
      });
    gw = await gateway(snapshot, { accessLog: join(dir, 'access.log') });
  });

  afterAll(async () => {
    await gw.dp.close();
    await gw.accessLog?.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one JSON line per request with id, client, route, service, consumer, status, upstream, latencies and bytes', async () => {
    const res = await send(gw.dp.port, '/metered/x?q=1', { headers: { apikey: 'alice-key' } });
    expect(res.status).toBe(200);
    const line = await accessLine(join(dir, 'access.log'), res.headers['x-kong-request-id']);
    expect(line).toMatchObject({
      client_ip: '127.0.0.1',
      method: 'GET',
      path: '/metered/x',
      query: 'q=1',
      status: 200,
      route: 'metered-route',
      service: 'metered',
      consumer: 'alice',
      upstream: `127.0.0.1:${echo.port}`,
      upstream_uri: '/x?q=1',
      source: 'service',
      completed: true,
    });
    expect(line.latencies.proxy).toBe(Number(res.headers['x-kong-upstream-latency']));
    expect(line.latencies.kong).toBe(Number(res.headers['x-kong-proxy-latency']));
    expect(line.bytes.request).toBeGreaterThan(0);
    expect(line.bytes.response).toBeGreaterThan(Number(res.headers['content-length']));
    expect(Date.parse(line.time)).not.toBeNaN();
  });

  it('lets go of the file on reopen, so a rotated log continues in a new file', async () => {
    const first = await send(gw.dp.port, '/plain/before-rotation');
    await accessLine(join(dir, 'access.log'), first.headers['x-kong-request-id']);
    await gw.accessLog!.drained();
    renameSync(join(dir, 'access.log'), join(dir, 'access.log.1'));
    gw.accessLog!.reopen();
    const res = await send(gw.dp.port, '/plain/after-rotation');
    await gw.accessLog!.drained();
    await waitFor('the new access log file', () => existsSync(join(dir, 'access.log')) && readFileSync(join(dir, 'access.log'), 'utf8').includes(String(res.headers['x-kong-request-id'])));
    expect(readFileSync(join(dir, 'access.log.1'), 'utf8')).not.toContain(String(res.headers['x-kong-request-id']));
  });

  it('counts requests by service, route, code, source and consumer only where the prometheus plugin applies', async () => {
    const before = await scrape(gw.registry);
    const ok = { service: 'metered', route: 'metered-route', code: '200', source: 'service', workspace: 'default', consumer: 'alice' };
    const refused = { service: 'metered', route: 'metered-route', code: '401', source: 'kong', workspace: 'default', consumer: '' };
    for (let i = 0; i < 3; i++) expect((await send(gw.dp.port, '/metered/a', { headers: { apikey: 'alice-key' } })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await send(gw.dp.port, '/metered/a', { headers: { apikey: 'wrong' } })).status).toBe(401);
    for (let i = 0; i < 4; i++) expect((await send(gw.dp.port, '/plain/a')).status).toBe(200);
    const after = await scrapeUntil(gw.registry, (s) => sample(s, 'kong_nginx_requests_total', { node_id: 'node-1', subsystem: 'http' }) >= sample(before, 'kong_nginx_requests_total', { node_id: 'node-1', subsystem: 'http' }) + 9 && sample(s, 'kong_request_latency_ms_count', { route: 'metered-route' }) >= sample(before, 'kong_request_latency_ms_count', { route: 'metered-route' }) + 5);
    expect(sample(after, 'kong_http_requests_total', ok) - sample(before, 'kong_http_requests_total', ok)).toBe(3);
    expect(sample(after, 'kong_http_requests_total', refused) - sample(before, 'kong_http_requests_total', refused)).toBe(2);
    const requests = after.families.find((f) => f.name === 'kong_http_requests_total')!;
    expect(requests.type).toBe('COUNTER');
    expect(requests.metrics.every((m) => m.labels?.service === 'metered')).toBe(true);
    expect(Object.keys(requests.metrics[0]!.labels!).sort()).toEqual(['code', 'consumer', 'route', 'service', 'source', 'workspace']);

    const latency = { service: 'metered', route: 'metered-route', workspace: 'default' };
    expect(sample(after, 'kong_request_latency_ms_count', latency) - sample(before, 'kong_request_latency_ms_count', latency)).toBe(5);
    expect(sample(after, 'kong_kong_latency_ms_count', latency) - sample(before, 'kong_kong_latency_ms_count', latency)).toBe(5);
    // the 401s never reached the upstream: only the 3 proxied requests have an upstream latency
    expect(sample(after, 'kong_upstream_latency_ms_count', latency) - sample(before, 'kong_upstream_latency_ms_count', latency)).toBe(3);
    expect(after.families.find((f) => f.name === 'kong_kong_latency_ms')!.type).toBe('HISTOGRAM');
    const buckets = after.samples.filter((s) => s.name === 'kong_kong_latency_ms_bucket' && s.labels.route === 'metered-route').map((s) => s.labels.le);
    expect(buckets).toEqual(['1', '2', '5', '7', '10', '15', '20', '30', '50', '75', '100', '200', '500', '750', '1000', '+Inf']);
    const upstreamBuckets = after.samples.filter((s) => s.name === 'kong_upstream_latency_ms_bucket' && s.labels.route === 'metered-route').map((s) => s.labels.le);
    expect(upstreamBuckets).toEqual(['25', '50', '80', '100', '250', '400', '700', '1000', '2000', '5000', '10000', '30000', '60000', '+Inf']);
    const egress = { service: 'metered', route: 'metered-route', direction: 'egress', workspace: 'default', consumer: 'alice' };
    expect(sample(after, 'kong_bandwidth_bytes', egress)).toBeGreaterThan(sample(before, 'kong_bandwidth_bytes', egress));
    expect(sample(after, 'kong_nginx_requests_total', { node_id: 'node-1', subsystem: 'http' })).toBeGreaterThanOrEqual(9);
    expect(serviceId).toBeDefined();
  });

  it('records the request size and response bytes the access log reports', async () => {
    const before = await scrape(gw.registry);
    const res = await send(gw.dp.port, '/metered/bytes', { method: 'POST', headers: { apikey: 'alice-key', 'content-type': 'text/plain' }, body: 'x'.repeat(1000) });
    // the access log line is written after the metrics are recorded
    const line = await accessLine(join(dir, 'access.log'), res.headers['x-kong-request-id']);
    const after = await scrape(gw.registry);
    const labels = (direction: string) => ({ service: 'metered', route: 'metered-route', direction, workspace: 'default', consumer: 'alice' });
    expect(sample(after, 'kong_bandwidth_bytes', labels('ingress')) - sample(before, 'kong_bandwidth_bytes', labels('ingress'))).toBe(line.bytes.request);
    expect(sample(after, 'kong_bandwidth_bytes', labels('egress')) - sample(before, 'kong_bandwidth_bytes', labels('egress'))).toBe(line.bytes.response);
    expect(line.bytes.request).toBeGreaterThan(1000);
  });

  it('keeps counting across configuration changes (series outlive snapshots)', async () => {
    const ok = { service: 'metered', route: 'metered-route', code: '200', source: 'service', workspace: 'default', consumer: 'alice' };
    const before = sample(await scrape(gw.registry), 'kong_http_requests_total', ok);
    // a new snapshot brings new route and service objects with the same names
    const next = JSON.parse(JSON.stringify({ ...snapshot, version: 2 })) as Snapshot;
    gw.holder.swap(compile(next));
    expect((await send(gw.dp.port, '/metered/a', { headers: { apikey: 'alice-key' } })).status).toBe(200);
    const after = await scrapeUntil(gw.registry, (s) => sample(s, 'kong_http_requests_total', ok) !== before);
    expect(sample(after, 'kong_http_requests_total', ok)).toBe(before + 1);
  });
});

describe('the end of an exchange the access log observes', () => {
  it('a client that leaves before the upstream answers gets a line, not completed, and its upstream request is let go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-observe-left-'));
    const slow = await startTargetServer('slow', { delayMs: 10_000 });
    const upstream = makeUpstream({ name: 'slow.test', algorithm: 'least-connections' });
    const svc = makeService({ name: 'slow', host: 'slow.test', port: 80 });
    const gw = await gateway(
      makeSnapshot({ services: [svc], routes: [makeRoute({ name: 'slow-route', paths: ['/slow'], service: { id: svc.id } })], upstreams: [upstream], targets: [makeTarget(upstream, { target: slow.address })] }),
      { accessLog: join(dir, 'access.log') },
    );
    try {
      const { request } = await import('node:http');
      const req = request({ host: '127.0.0.1', port: gw.dp.port, path: '/slow/left', agent: false });
      req.on('error', () => undefined);
      req.end();
      const address = () => gw.dp.balancers.get('slow.test')!.addresses[0]!;
      await waitFor('the request to be in flight', () => address().active === 1);
      req.destroy();
      // the relay hears of it from the observer's listener: the attempt ends, the target no longer counts it
      await waitFor('the count to drop when the client left (the upstream answers seconds later)', () => address().active === 0, 2_000);
      let line: any;
      await waitFor('the line of the request the client left', () => {
        if (!existsSync(join(dir, 'access.log'))) return false;
        line = readFileSync(join(dir, 'access.log'), 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l)).find((l) => l.path === '/slow/left');
        return line !== undefined;
      });
      expect(line).toMatchObject({ route: 'slow-route', service: 'slow', upstream: slow.address, upstream_uri: '/left', source: 'kong', completed: false });
      expect(line.latencies.proxy).toBe(-1);
      expect(slow.hits).toBe(1);
    } finally {
      await gw.dp.close();
      await gw.accessLog?.close();
      await slow.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('logging plugins: correlation-id, file-log, http-log', () => {
  let echo: EchoUpstream;
  let collector: LogCollector;
  let gw: Gateway;
  let dir: string;
  let ids: Record<string, string>;
  const bob = makeConsumer({ username: 'bob' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-logplugins-'));
    echo = await startEchoUpstream();
    collector = await startLogCollector();
    const dead = await closedPort();
    const svc = makeService({ name: 'logged', url: echo.url });
    const route = (name: string) => makeRoute({ name, paths: [`/${name}`], service: { id: svc.id } });
    const routes = ['corr', 'corr-echo', 'tracker', 'file', 'batched', 'single', 'flaky', 'bounded'].map(route);
    const r = Object.fromEntries(routes.map((x) => [x.name!, x]));
    const retry = { initial_retry_delay: 0.05, max_retry_delay: 0.2, max_retry_time: 60 };
    const plugins = [
      makePlugin({ name: 'correlation-id', route: { id: r.corr!.id } }),
      makePlugin({ name: 'correlation-id', route: { id: r['corr-echo']!.id }, config: { header_name: 'X-Trace', generator: 'uuid', echo_downstream: true } }),
      makePlugin({ name: 'correlation-id', route: { id: r.tracker!.id }, config: { generator: 'tracker' } }),
      makePlugin({ name: 'file-log', route: { id: r.file!.id }, config: { path: join(dir, 'file-log.json') } }),
      makePlugin({ name: 'key-auth', route: { id: r.batched!.id } }),
      makePlugin({
        name: 'http-log',
        route: { id: r.batched!.id },
        config: { http_endpoint: `${collector.url}/batched`, method: 'PUT', headers: { 'x-token': 'abc' }, queue: { max_batch_size: 3, max_coalescing_delay: 5 } },
      }),
      makePlugin({ name: 'http-log', route: { id: r.single!.id }, config: { http_endpoint: `${collector.url}/single`, content_type: 'application/json; charset=utf-8', queue: { max_coalescing_delay: 0 } } }),
      makePlugin({ name: 'http-log', route: { id: r.flaky!.id }, config: { http_endpoint: `${collector.url}/flaky`, queue: { max_coalescing_delay: 0, ...retry } } }),
      makePlugin({ name: 'http-log', route: { id: r.bounded!.id }, config: { http_endpoint: `http://127.0.0.1:${dead}/never`, queue: { max_coalescing_delay: 0, max_entries: 2, ...retry } } }),
    ];
    ids = Object.fromEntries(plugins.map((p) => [`${p.name}:${(p.route as { id: string }).id}`, p.id]));
    ids.bounded = plugins[plugins.length - 1]!.id;
    ids.flaky = plugins[plugins.length - 2]!.id;
    gw = await gateway(
      makeSnapshot({ services: [svc], routes, consumers: [bob], plugins, credentials: { keyauth_credentials: [makeCredential(bob, { key: 'bob-key' })] } }),
    );
  });

  afterAll(async () => {
    await gw.dp.close();
    await gw.plugins.close();
    await collector.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('correlation-id: generates uuid#counter ids, forwards them, and keeps a client\'s own id', async () => {
    const a = await send(gw.dp.port, '/corr/x');
    const b = await send(gw.dp.port, '/corr/x');
    const idA = a.json.headers['kong-request-id'];
    const idB = b.json.headers['kong-request-id'];
    expect(idA).toMatch(/^[0-9a-f-]{36}#\d+$/);
    expect(idB.split('#')[0]).toBe(idA.split('#')[0]);
    expect(Number(idB.split('#')[1])).toBe(Number(idA.split('#')[1]) + 1);
    expect(a.headers['kong-request-id']).toBeUndefined();
    const own = await send(gw.dp.port, '/corr/x', { headers: { 'kong-request-id': 'mine-1' } });
    expect(own.json.headers['kong-request-id']).toBe('mine-1');
  });

  it('correlation-id: a custom header with uuid ids, echoed downstream; the tracker generator', async () => {
    const res = await send(gw.dp.port, '/corr-echo/x');
    expect(res.json.headers['x-trace']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.headers['x-trace']).toBe(res.json.headers['x-trace']);
    const own = await send(gw.dp.port, '/corr-echo/x', { headers: { 'x-trace': 'client-trace' } });
    expect(own.headers['x-trace']).toBe('client-trace');
    const tracked = await send(gw.dp.port, '/tracker/x');
    expect(tracked.json.headers['kong-request-id']).toMatch(/^127\.0\.0\.1-\d+-\d+-\d+-\d+-\d{10}\.\d{3}$/);
  });

  it('file-log: appends one JSON line per request in Kong\'s log serializer shape', async () => {
    const res = await send(gw.dp.port, '/file/some/path?a=1&a=2&flag', { headers: { authorization: 'Basic c2VjcmV0', 'x-extra': 'yes' } });
    const file = join(dir, 'file-log.json');
    let entry: any;
    await waitFor('the file-log line', () => {
      if (!existsSync(file)) return false;
      // a batch may be half written when read: only whole lines count
      const lines = readFileSync(file, 'utf8').split('\n').slice(0, -1);
      entry = lines.map((l) => JSON.parse(l)).find((e) => e.request.id === res.headers['x-kong-request-id']);
      return entry !== undefined;
    });
    expect(entry.request).toMatchObject({ method: 'GET', uri: '/file/some/path?a=1&a=2&flag', querystring: { a: ['1', '2'], flag: true } });
    expect(entry.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/file\/some\/path\?a=1&a=2&flag$/);
    expect(entry.request.headers['x-extra']).toBe('yes');
    expect(entry.request.headers.authorization).toBe('REDACTED');
    expect(entry.response.status).toBe(200);
    expect(entry.response.headers['x-kong-request-id']).toBe(res.headers['x-kong-request-id']);
    expect(entry.response.size).toBeGreaterThan(0);
    expect(entry.upstream_uri).toBe('/some/path?a=1&a=2&flag');
    expect(entry.upstream_status).toBe('200');
    expect(entry.route.name).toBe('file');
    expect(entry.service.name).toBe('logged');
    expect(entry.tries).toEqual([{ ip: '127.0.0.1', port: echo.port, balancer_latency: 0, balancer_start: entry.started_at }]);
    expect(entry.latencies).toEqual({ kong: expect.any(Number), proxy: expect.any(Number), request: expect.any(Number), receive: 0 });
    expect(entry.client_ip).toBe('127.0.0.1');
    expect(entry.source).toBe('service');
    expect(Number.isInteger(entry.started_at)).toBe(true);
  });

  it('http-log: sends batches of max_batch_size as JSON arrays, with the configured method and headers', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await send(gw.dp.port, `/batched/${i}`, { headers: { apikey: i === 2 ? 'wrong' : 'bob-key' } });
      sent.push(String(res.headers['x-kong-request-id']));
    }
    await waitFor('one batch at the collector', () => collector.received.some((r) => r.url === '/logs/batched'));
    const batch = collector.received.find((r) => r.url === '/logs/batched')!;
    expect(batch.method).toBe('PUT');
    expect(batch.headers['x-token']).toBe('abc');
    expect(batch.headers['content-type']).toBe('application/json');
    const entries = batch.body as any[];
    expect(entries.map((e) => e.request.id)).toEqual(sent);
    expect(entries.map((e) => e.response.status)).toEqual([200, 200, 401]);
    expect(entries[0].consumer.username).toBe('bob');
    expect(entries[2].consumer).toBeUndefined();
    expect(entries[2].source).toBe('kong');
    expect(entries[2].latencies.proxy).toBe(-1);
  });

  it('http-log: one object per request with max_batch_size 1', async () => {
    const res = await send(gw.dp.port, '/single/x');
    await waitFor('the single entry', () => collector.received.some((r) => r.url === '/logs/single'));
    const got = collector.received.find((r) => r.url === '/logs/single')!;
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Array.isArray(got.body)).toBe(false);
    expect((got.body as any).request.id).toBe(res.headers['x-kong-request-id']);
  });

  it('http-log: keeps entries while the collector is down and delivers them once it is back', async () => {
    await collector.stop();
    const sent = [String((await send(gw.dp.port, '/flaky/1')).headers['x-kong-request-id']), String((await send(gw.dp.port, '/flaky/2')).headers['x-kong-request-id'])];
    await waitFor('the queue to hold both entries', () => gw.queues.stats().some((s) => s.owner === ids.flaky && s.entries === 2));
    await collector.start();
    await waitFor('both entries at the collector', () => sent.every((id) => collector.received.some((r) => r.url === '/logs/flaky' && (r.body as any).request.id === id)));
    // the queue counts an entry as sent once the collector's answer is back, just after the collector has it
    await waitFor('the queue to count both as sent', () => gw.queues.stats().some((s) => s.owner === ids.flaky && s.sent === 2));
    expect(gw.queues.stats().find((s) => s.owner === ids.flaky)).toMatchObject({ sent: 2, entries: 0, dropped: 0, failed: 0 });
  });

  it('http-log: a full queue drops its oldest waiting entries and counts them', async () => {
    // the first entry is the batch being retried; the next two wait; each of the last two pushes out the oldest waiting
    for (let i = 0; i < 5; i++) expect((await send(gw.dp.port, `/bounded/${i}`)).status).toBe(200);
    await waitFor('two dropped entries', () => gw.queues.stats().some((s) => s.owner === ids.bounded && s.dropped === 2));
    expect(gw.queues.stats().find((s) => s.owner === ids.bounded)).toMatchObject({ entries: 3, dropped: 2, sent: 0 });
    const scraped = await scrape(gw.registry);
    expect(sample(scraped, 'gatehouse_log_queue_dropped_total', { plugin_id: ids.bounded! })).toBe(2);
  });
});

describe('kong_upstream_target_health', () => {
  it('lists what the balancer registers, one series per state, while a prometheus config asks for it', async () => {
    const svc = makeService({ name: 'h', url: 'http://127.0.0.1:9' });
    const route = makeRoute({ name: 'h', paths: ['/h'], service: { id: svc.id } });
    const withFlag = (on: boolean) => makeSnapshot({ services: [svc], routes: [route], plugins: [makePlugin({ name: 'prometheus', config: { upstream_health_metrics: on } })] });
    const holder = new ConfigHolder(compile(withFlag(false)));
    const registry = new Registry();
    const metrics = new DataPlaneMetrics({ registry, nodeId: 'n', holder });
    const unregister = metrics.upstreamHealth.register(() => [
      { upstream: 'up', target: 'a:80', address: '10.0.0.1:80', state: 'healthy' },
      { upstream: 'up', target: 'b:80', address: '', state: 'dns_error' },
    ]);
    const health = async () => prometheusSamples(await registry.metrics()).filter((s) => s.name === 'kong_upstream_target_health');
    expect(await health()).toEqual([]);
    holder.swap(compile(withFlag(true)));
    const series = await health();
    expect(series).toHaveLength(8);
    expect(series.filter((s) => s.value === 1).map((s) => s.labels)).toEqual([
      { upstream: 'up', target: 'a:80', address: '10.0.0.1:80', state: 'healthy', subsystem: 'http' },
      { upstream: 'up', target: 'b:80', address: '', state: 'dns_error', subsystem: 'http' },
    ]);
    unregister();
    expect(await health()).toEqual([]);
  });

  it("a data plane's balancers report their targets' addresses and states", async () => {
    const upstream = makeUpstream({ name: 'orders.lb' });
    const svc = makeService({ name: 'svc', url: 'http://orders.lb' });
    const route = makeRoute({ name: 'lb', paths: ['/lb'], service: { id: svc.id } });
    const snapshot = makeSnapshot({
      services: [svc],
      routes: [route],
      upstreams: [upstream],
      targets: [makeTarget(upstream, { target: '127.0.0.1:9101' }), makeTarget(upstream, { target: '127.0.0.1:9102' })],
      plugins: [makePlugin({ name: 'prometheus', config: { upstream_health_metrics: true } })],
    });
    const holder = new ConfigHolder(compile(snapshot));
    const registry = new Registry();
    const metrics = new DataPlaneMetrics({ registry, nodeId: 'n', holder });
    const dp = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, log: quietLog, metrics });
    try {
      const series = prometheusSamples(await registry.metrics()).filter((s) => s.name === 'kong_upstream_target_health' && s.value === 1);
      expect(series.map((s) => s.labels)).toEqual([
        { upstream: 'orders.lb', target: '127.0.0.1:9101', address: '127.0.0.1:9101', state: 'healthchecks_off', subsystem: 'http' },
        { upstream: 'orders.lb', target: '127.0.0.1:9102', address: '127.0.0.1:9102', state: 'healthchecks_off', subsystem: 'http' },
      ]);
    } finally {
      await dp.close();
    }
    // a closed data plane no longer reports
    expect(prometheusSamples(await registry.metrics()).filter((s) => s.name === 'kong_upstream_target_health')).toEqual([]);
  });
});

describe('the log hook', () => {
  it('runs after the response for the plugin\'s routes only; a failing hook is logged with the request id, never seen by the client', async () => {
    const echo = await startEchoUpstream();
    const seen: Array<{ status: number; requestId: string; route: string | null | undefined }> = [];
    const errors: Array<Record<string, unknown> | undefined> = [];
    // any config record will do: this plugin only has a log hook
    const recorder = definePlugin<unknown, unknown>({
      name: 'recorder',
      priority: 5,
      version: '0',
      configSchema: prometheusConfigSchema,
      auth: false,
      noConsumer: false,
      log: (_ctx, _conf, summary) => {
        seen.push({ status: summary.status, requestId: summary.requestId, route: summary.route?.name });
        if (summary.path.endsWith('/boom')) throw new Error('boom');
        if (summary.path.endsWith('/reject')) return Promise.reject(new Error('rejected'));
      },
    });
    const svc = makeService({ name: 'svc', url: echo.url });
    const watched = makeRoute({ name: 'watched', paths: ['/watched'], service: { id: svc.id } });
    const other = makeRoute({ name: 'other', paths: ['/other'], service: { id: svc.id } });
    const snapshot = makeSnapshot({ services: [svc], routes: [watched, other], plugins: [makePlugin({ name: 'recorder', route: { id: watched.id }, config: {} })] });
    const holder = new ConfigHolder(compile(snapshot, { findPlugin: (name) => (name === 'recorder' ? (recorder as PluginDefinition) : findPlugin(name)) }));
    const dp = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, log: { error: (_m, detail) => void errors.push(detail), warn: () => {} } });
    try {
      const ok = await send(dp.port, '/watched/fine');
      await send(dp.port, '/other/x');
      const boom = await send(dp.port, '/watched/boom');
      const rejected = await send(dp.port, '/watched/reject');
      expect([ok.status, boom.status, rejected.status]).toEqual([200, 200, 200]);
      await waitFor('three log hooks and two logged failures', () => seen.length === 3 && errors.length === 2);
      expect(seen.map((s) => s.requestId)).toEqual([ok, boom, rejected].map((r) => r.headers['x-kong-request-id']));
      expect(seen.every((s) => s.route === 'watched' && s.status === 200)).toBe(true);
      expect(errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ plugin: 'recorder', request_id: boom.headers['x-kong-request-id'], error: 'boom' }),
          expect.objectContaining({ plugin: 'recorder', request_id: rejected.headers['x-kong-request-id'], error: 'rejected' }),
        ]),
      );
    } finally {
      await dp.close();
      await echo.close();
    }
  });
});
