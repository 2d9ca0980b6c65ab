import { describe, expect, it } from '@jest/globals';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from '../compile/compile';
import { normalizePath } from './normalize-path';
import { PATH_HANDLING_CASES, type PathHandlingCase } from './upstream-path.cases';
import { upstreamPath, withoutLeadingDotSegment } from './upstream-path';

/** The upstream path of a request the way the proxy builds it: normalise, route, join (upstream-request.ts). */
function proxiedPath(c: PathHandlingCase, routePath: string | null): string {
  const service = makeService({ name: 'svc', url: `http://upstream.test${c.servicePath}` });
  const host = 'localbin.test';
  const route = makeRoute({
    service: { id: service.id },
    strip_path: c.stripPath,
    path_handling: c.pathHandling,
    ...(routePath === null ? { hosts: [host] } : { paths: [routePath] }),
  });
  const config = compile(makeSnapshot({ services: [service], routes: [route] }));
  const path = normalizePath(c.requestPath);
  if (path === null) throw new Error(`${c.requestPath} refused by normalisation`);
  const match = config.router.match('GET', host, path, {});
  if (match === null) throw new Error(`${c.requestPath} matched no route`);
  const compiled = match.route;
  return upstreamPath(compiled.upstream!.basePath, path, match.matched, compiled.stripPath, compiled.pathHandling);
}

const label = (c: PathHandlingCase) =>
  `line ${c.line}: service ${c.servicePath}, ${c.routePath === null ? 'host route' : `route ${c.routePath}`}, strip ${c.stripPath}, ${c.pathHandling}: ${c.requestPath} → ${c.expectedPath}`;

// Kong 3.9 replays its fixture's v1 lines only on the `traditional` router; under `traditional_compatible` (ours) a
// v1 route joins paths as v0 does
const V0_CASES = PATH_HANDLING_CASES.filter((c) => c.pathHandling === 'v0');

describe("Kong's path-handling fixture, through normalisation, the router and the join", () => {
  it('compiles a path_handling v1 route to the v0 join', () => {
    const v1 = PATH_HANDLING_CASES.find((c) => c.pathHandling === 'v1' && c.servicePath === '/srv' && !c.stripPath)!;
    expect(proxiedPath(v1, v1.routePath)).toBe('/srv/roureq');
  });

  it.each(V0_CASES.map((c) => [label(c), c] as const))('prefix or host route, %s', (_, c) => {
    expect(proxiedPath(c, c.routePath)).toBe(c.expectedPath);
  });

  // Kong replays the fixture with each path turned into a regex that matches the same text: `/route` → `~/[0]?route`
  const regexCases = V0_CASES.filter((c) => c.routePath !== null);
  it.each(regexCases.map((c) => [label(c), c] as const))('regex route, %s', (_, c) => {
    expect(proxiedPath(c, `~/[0]?${c.routePath!.slice(1)}`)).toBe(c.expectedPath);
  });
});

describe('upstream path (kong-reference 5.3)', () => {
  it('strip_path with no service path: the matched prefix goes, a leading slash stays', () => {
    expect(upstreamPath('/', '/foo/bar', '/foo', true, 'v0')).toBe('/bar');
    expect(upstreamPath('/', '/foo', '/foo', true, 'v0')).toBe('/');
    expect(upstreamPath('/', '/foobar', '/foo', true, 'v0')).toBe('/bar');
  });

  it('strip_path with a service path: the remainder is joined to it, a trailing slash only when the request had one', () => {
    expect(upstreamPath('/s', '/foo/bar', '/foo', true, 'v0')).toBe('/s/bar');
    expect(upstreamPath('/s', '/foo', '/foo', true, 'v0')).toBe('/s');
    expect(upstreamPath('/s', '/foo/', '/foo', true, 'v0')).toBe('/s/');
    expect(upstreamPath('/s/', '/foo/bar', '/foo', true, 'v0')).toBe('/s/bar');
    expect(upstreamPath('/s/', '/foo', '/foo', true, 'v0')).toBe('/s');
    expect(upstreamPath('/s/', '/foo/', '/foo', true, 'v0')).toBe('/s/');
  });

  it('without strip_path: service path + full request path', () => {
    expect(upstreamPath('/', '/foo/bar', '/foo', false, 'v0')).toBe('/foo/bar');
    expect(upstreamPath('/s', '/foo/bar', '/foo', false, 'v0')).toBe('/s/foo/bar');
    expect(upstreamPath('/s/', '/foo/bar', '/foo', false, 'v0')).toBe('/s/foo/bar');
  });

  it('a route without paths strips nothing', () => {
    expect(upstreamPath('/s', '/any/thing', '', true, 'v0')).toBe('/s/any/thing');
  });

  it('regex paths strip what the regex matched', () => {
    expect(upstreamPath('/', '/users/42/orders', '/users/42', true, 'v0')).toBe('/orders');
  });

  it('v1 appends the remainder as it is', () => {
    expect(upstreamPath('/s', '/foobar', '/foo', true, 'v1')).toBe('/sbar');
    expect(upstreamPath('/s', '/foo/bar', '/foo', true, 'v1')).toBe('/s/bar');
    expect(upstreamPath('/s', '/foo', '/foo', true, 'v1')).toBe('/s');
    expect(upstreamPath('/', '/foobar', '/foo', true, 'v1')).toBe('/bar');
  });
});

describe('no dot segment reaches an upstream after stripping', () => {
  it.each([
    ['/route../req', '/service/req'],
    ['/route./req', '/service/req'],
    ['/route..', '/service'],
    ['/route.', '/service'],
    ['/route../', '/service/'],
    ['/route..%2Freq', '/service/req'],
    ['/route..%2freq', '/service/req'],
    ['/route.%5Creq', '/service/req'],
    ['/route..\\req', '/service/req'],
    ['/route..;x/req', '/service/req'],
    ['/route..;x', '/service'],
  ])('route /route, service /service: %s → %s', (request, expected) => {
    expect(upstreamPath('/service', request, '/route', true, 'v0')).toBe(expected);
  });

  it.each([
    ['/route../req', '/servicereq'],
    ['/route..%2Freq', '/servicereq'],
  ])('v1 too: %s → %s', (request, expected) => {
    expect(upstreamPath('/service', request, '/route', true, 'v1')).toBe(expected);
  });

  it.each([
    ['...', '...'],
    ['.hidden/x', '.hidden/x'],
    ['..x/y', '..x/y'],
    ['.%41', '.%41'],
    ['req', 'req'],
    ['', ''],
  ])('keeps a remainder whose first segment is no dot segment: %j', (remainder, expected) => {
    expect(withoutLeadingDotSegment(remainder)).toBe(expected);
  });
});
