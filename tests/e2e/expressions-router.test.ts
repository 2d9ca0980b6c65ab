// Kong's expressions router (router_flavor = expressions, decision 35) through real processes in both topologies.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { freePorts, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, withHost } from './support/helpers';
import { startTcpEcho, tcpExchange, type EchoServer } from './support/stream-echo';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

// starting a topology takes long on a loaded machine
jest.setTimeout(240_000);

describe.each(TOPOLOGIES)('expressions router (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  /** each data plane's TCP stream listener */
  let streamPorts: number[];
  const echoes: EchoServer[] = [];

  /** a service whose path names it, so the upstream path shows which route matched */
  const service = (label: string) => createdThrough(topology.adminUrl, '/services', { name: label, url: `${upstream.url}/${label}` });
  const route = (label: string, body: Record<string, unknown>) => createdThrough(topology.adminUrl, `/services/${label}/routes`, { name: label, ...body });

  /** the upstream URL a request reached on every data plane (asserted the same), or the gateway's status */
  async function reached(path: string, headers: Record<string, string> = {}): Promise<string | number> {
    const seen = new Set<string | number>();
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}${path}`, { headers });
      seen.add(res.status === 200 ? (res.body.url as string) : res.status);
    }
    expect(seen.size).toBe(1);
    return [...seen][0]!;
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    streamPorts = await freePorts(2);
    echoes.push(await startTcpEcho('a'), await startTcpEcho('b'));
    topology = await startTopology(name, {
      env: { GATEHOUSE_ROUTER_FLAVOR: 'expressions' },
      dataPlaneEnv: (i) => ({ GATEHOUSE_STREAM_LISTEN: `127.0.0.1:${streamPorts[i]}` }),
    });
    for (const label of ['low', 'high', 'lower', 'query', 'host', 'regex', 'trad', 'keep']) await service(label);
    await route('low', { expression: 'http.path ^= "/prio"', priority: 1 });
    await route('high', { expression: 'http.path ^= "/prio" && http.headers.x_tier == "gold"', priority: 10 });
    await route('lower', { expression: 'http.path ^= "/lower" && lower(http.headers.x_mode) == "fast"' });
    await route('query', { expression: 'http.path == "/q" && (http.queries.version == "2" || http.queries.v == "2")', strip_path: false });
    await route('host', { expression: 'http.host == "expr.test" && http.method == "GET"' });
    await route('regex', { expression: 'http.path ~ r#"^/items/\\d+$"# && !(http.method == "DELETE")', priority: 5, strip_path: false });
    await route('keep', { expression: 'http.path ^= "/keep"', strip_path: false });
    // a traditional route keeps working beside expression routes
    await route('trad', { paths: ['/trad'] });
    // stream routes read net.* fields
    const [a, b] = echoes;
    await createdThrough(topology.adminUrl, '/services', { name: 'tcp-a', url: `tcp://127.0.0.1:${a!.port}` });
    await createdThrough(topology.adminUrl, '/services', { name: 'tcp-b', url: `tcp://127.0.0.1:${b!.port}` });
    await route('tcp-a', { protocols: ['tcp'], expression: 'net.src.ip in 127.0.0.0/8', priority: 1 });
    await route('tcp-b', { protocols: ['tcp'], expression: 'net.src.ip == 127.0.0.2 && net.dst.port > 0', priority: 5 });
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      ...echoes.map((e) => () => e.close()),
    );
  });

  it('tries routes by priority, highest first', async () => {
    expect(await reached('/prio/x', { 'x-tier': 'gold' })).toBe('/high/x');
    expect(await reached('/prio/x', { 'x-tier': 'silver' })).toBe('/low/x');
    expect(await reached('/prio/x')).toBe('/low/x');
  });

  it('reads headers through lower(), query arguments and the host', async () => {
    expect(await reached('/lower/a', { 'x-mode': 'FAST' })).toBe('/lower/a');
    expect(await reached('/lower/a', { 'x-mode': 'slow' })).toBe(404);
    expect(await reached('/q?version=2')).toBe('/query/q?version=2');
    expect(await reached('/q?v=2')).toBe('/query/q?v=2');
    expect(await reached('/q?version=3')).toBe(404);
    for (const dp of topology.dataPlanes) {
      const res = await withHost(`${dp.proxyUrl}/anything`, 'expr.test');
      expect([res.status, res.body.url]).toEqual([200, '/host/anything']);
      expect((await withHost(`${dp.proxyUrl}/anything`, 'other.test')).status).toBe(404);
    }
  });

  it('strips what http.path matched, or nothing with strip_path off', async () => {
    expect(await reached('/keep/a')).toBe('/keep/keep/a');
    expect(await reached('/items/42')).toBe('/regex/items/42');
    expect(await reached('/items/x')).toBe(404);
  });

  it('routes traditional routes beside expression routes', async () => {
    expect(await reached('/trad/z')).toBe('/trad/z');
  });

  it('matches stream connections on net.* by priority', async () => {
    for (const port of streamPorts.slice(0, topology.dataPlanes.length)) {
      expect(await tcpExchange(port, 'ping')).toBe('a:ping');
      expect(await tcpExchange(port, 'ping', '127.0.0.2')).toBe('b:ping');
    }
  });

  it('refuses an invalid expression with Kong’s message and keeps serving', async () => {
    const res = await jsonAdmin(topology.adminUrl, 'POST', '/routes', { expression: 'http.path ^= "/x" && http.nope == "y"' });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual({ '@entity': ['Router Expression failed validation: Unknown LHS field'] });
    expect(await reached('/prio/y')).toBe('/low/y');
  });
});
