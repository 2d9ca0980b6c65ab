// Kong 3.9's path-handling fixture replayed through the proxy, in both topologies: every case gets a route of its own
// (selected by Host), and the upstream path each data plane forwards must be Kong's. Also: what `strip_path` leaves
// never starts with a dot segment, whatever form the dots were sent in; a header sent on several lines matches line by line.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { PATH_HANDLING_CASES, type PathHandlingCase } from '../../packages/data-plane/src/proxy/upstream-path.cases';
import { cleanUp, withHost } from './support/helpers';
import { adminClient, startTopology, TOPOLOGIES, type Topology } from './support/topology';

interface RouteSetup {
  host: string;
  servicePath: string;
  routePath: string | null;
  stripPath: boolean;
  pathHandling: 'v0' | 'v1';
}

const keyOf = (s: Omit<RouteSetup, 'host'>) => JSON.stringify([s.servicePath, s.routePath, s.stripPath, s.pathHandling]);

/** One route per distinct (service path, route path, strip_path, path_handling), each on a host of its own. */
function routeSetups(cases: PathHandlingCase[], routePathOf: (c: PathHandlingCase) => string | null, label: string): Map<string, RouteSetup> {
  const setups = new Map<string, RouteSetup>();
  for (const c of cases) {
    const setup = { servicePath: c.servicePath, routePath: routePathOf(c), stripPath: c.stripPath, pathHandling: c.pathHandling };
    const key = keyOf(setup);
    if (!setups.has(key)) setups.set(key, { ...setup, host: `${label}${setups.size}.kong-cases.test` });
  }
  return setups;
}

const V0_CASES = PATH_HANDLING_CASES.filter((c) => c.pathHandling === 'v0');
const asRegex = (c: PathHandlingCase) => `~/[0]?${c.routePath!.slice(1)}`;
const plainSetups = routeSetups(PATH_HANDLING_CASES, (c) => c.routePath, 'p');
const regexCases = PATH_HANDLING_CASES.filter((c) => c.routePath !== null);
const regexSetups = routeSetups(regexCases, asRegex, 'r');

const DOT_CASES: Array<[string, string]> = [
  ['/route../req', '/service/req'],
  ['/route./req', '/service/req'],
  ['/route%2E%2E/req', '/service/req'],
  ['/route%2e/req', '/service/req'],
  ['/route..', '/service'],
  ['/route..%2Freq', '/service/req'],
  ['/route..%5Creq', '/service/req'],
  ['/route..;x/req', '/service/req'],
];

describe.each(TOPOLOGIES)("Kong's routing cases through the proxy (%s)", (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;

  /** the upstream path each data plane forwarded the request with (all must agree) */
  async function forwarded(path: string, host: string): Promise<string> {
    const urls = new Set<string>();
    for (const dp of topology.dataPlanes) {
      const res = await withHost(`${dp.proxyUrl}${path}`, host);
      if (res.status !== 200) throw new Error(`${host} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
      urls.add(res.body.url);
    }
    expect(urls.size).toBe(1);
    return [...urls][0]!;
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    const admin = adminClient(topology.adminUrl);
    const created = async (path: string, form: Record<string, string | string[]>) => {
      const res = await admin.post(path, form);
      if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const servicePaths = new Set([...PATH_HANDLING_CASES.map((c) => c.servicePath), '/service']);
    const serviceIds = new Map<string, string>();
    let n = 0;
    for (const path of servicePaths) serviceIds.set(path, (await created('/services', { name: `svc-${n++}`, url: `${upstream.url}${path}` })).id);
    for (const setup of [...plainSetups.values(), ...regexSetups.values()]) {
      await created(`/services/${serviceIds.get(setup.servicePath)}/routes`, {
        'hosts[]': setup.host,
        ...(setup.routePath === null ? {} : { 'paths[]': setup.routePath }),
        strip_path: String(setup.stripPath),
        path_handling: setup.pathHandling,
      });
    }
    // dot segments after stripping: route /route, service /service, on a host of their own
    await created(`/services/${serviceIds.get('/service')}/routes`, { 'hosts[]': 'dots.kong-cases.test', 'paths[]': '/route', strip_path: 'true' });
    await created(`/services/${serviceIds.get('/service')}/routes`, { 'hosts[]': 'dots-regex.kong-cases.test', 'paths[]': '~/rout[e]', strip_path: 'true' });
    // a header sent on several lines is matched line by line
    await created(`/services/${serviceIds.get('/service')}/routes`, { 'hosts[]': 'lines.kong-cases.test', 'paths[]': '/lines', 'headers.x-version[]': 'v2' });
    await topology.converge();
  }, 180_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  it("every v0 case of Kong's path-handling fixture (prefix and host routes)", async () => {
    const wrong: string[] = [];
    for (const c of V0_CASES) {
      const setup = plainSetups.get(keyOf(c))!;
      const got = await forwarded(c.requestPath, setup.host);
      if (got !== c.expectedPath) wrong.push(`line ${c.line} ${keyOf(c)} ${c.requestPath}: ${got}, Kong ${c.expectedPath}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it("every case of Kong's path-handling fixture with the path as a regex", async () => {
    const wrong: string[] = [];
    for (const c of regexCases.filter((r) => r.pathHandling === 'v0')) {
      const setup = regexSetups.get(keyOf({ ...c, routePath: asRegex(c) }))!;
      const got = await forwarded(c.requestPath, setup.host);
      if (got !== c.expectedPath) wrong.push(`line ${c.line} ${keyOf(c)} ${c.requestPath}: ${got}, Kong ${c.expectedPath}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  // Kong 3.9 runs its fixture's v1 lines only on the `traditional` router: under `traditional_compatible` a v1 route
  // joins paths as v0 does
  it('a path_handling v1 route forwards what the same v0 route does', async () => {
    const wrong: string[] = [];
    for (const c of PATH_HANDLING_CASES.filter((r) => r.pathHandling === 'v1')) {
      const twin = V0_CASES.find((v) => keyOf(v) === keyOf({ ...c, pathHandling: 'v0' }) && v.requestPath === c.requestPath);
      if (twin === undefined) continue;
      const got = await forwarded(c.requestPath, plainSetups.get(keyOf(c))!.host);
      if (got !== twin.expectedPath) wrong.push(`line ${c.line} ${keyOf(c)} ${c.requestPath}: ${got}, v0 ${twin.expectedPath}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it.each(DOT_CASES)('no dot segment reaches the upstream after stripping: %s → %s', async (path, expected) => {
    expect(await forwarded(path, 'dots.kong-cases.test')).toBe(expected);
    expect(await forwarded(path, 'dots-regex.kong-cases.test')).toBe(expected);
  });

  it('a header sent on several lines matches a route when one of its lines does', async () => {
    for (const dp of topology.dataPlanes) {
      const port = Number(new URL(dp.proxyUrl).port);
      const head = (lines: string) => `GET /lines/x HTTP/1.1\r\nhost: lines.kong-cases.test\r\n${lines}connection: close`;
      expect((await rawRequest(port, { head: head('x-version: v1\r\nx-version: v2\r\n') })).status).toBe(200);
      expect((await rawRequest(port, { head: head('x-version: v1\r\n') })).status).toBe(404);
    }
  });
});
