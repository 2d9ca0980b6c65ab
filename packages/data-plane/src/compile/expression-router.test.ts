import { describe, expect, it } from '@jest/globals';
import type { Route } from '@gatehouse/core';
import { makeExpressionRoute, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from './compile';
import type { RequestFacts } from './expression-match';

const service = makeService({ name: 'svc', url: 'http://upstream.test' });

const routerOf = (routes: Route[]) => compile(makeSnapshot({ services: [service], routes })).router;

/** A route carrying an expression (router_flavor = expressions); ids order ties, as in Kong. */
function expr(name: string, expression: string, priority = 0, id?: string): Route {
  return makeExpressionRoute({ name, service: { id: service.id }, expression, priority, ...(id ? { id } : {}) });
}

const trad = (name: string, fields: Record<string, unknown>) => makeRoute({ name, service: { id: service.id }, ...fields });

interface Req {
  method?: string;
  host?: string;
  path?: string;
  headers?: Record<string, string | string[]>;
  sni?: string;
  facts?: Partial<RequestFacts>;
}

function matcher(routes: Route[]) {
  const router = routerOf(routes);
  return (req: Req) => {
    const facts: RequestFacts = { scheme: 'http', query: '', ...req.facts };
    const m = router.match(req.method ?? 'GET', req.host, req.path ?? '/', req.headers ?? {}, 8000, req.sni, facts);
    return m === null ? null : { name: m.route.route.name, matched: m.matched };
  };
}

describe('expressions router', () => {
  it('matches on method, host, path (prefix, exact, regex) and records what http.path matched', () => {
    const match = matcher([
      expr('prefix', 'http.path ^= "/api" && http.method == "GET"'),
      expr('exact', 'http.path == "/exact"'),
      expr('regex', 'http.path ~ r#"^/items/\\d+$"#'),
      expr('host', 'http.host == "a.test" && http.path ^= "/"'),
      expr('unanchored', 'http.path ~ "/tail$"'),
    ]);
    expect(match({ path: '/some/tail' })).toEqual({ name: 'unanchored', matched: '/tail' });
    expect(match({ path: '/api/x' })).toEqual({ name: 'prefix', matched: '/api' });
    expect(match({ path: '/api/x', method: 'POST' })).toBeNull();
    expect(match({ path: '/exact' })).toEqual({ name: 'exact', matched: '/exact' });
    expect(match({ path: '/exact/more' })).toBeNull();
    expect(match({ path: '/items/42' })).toEqual({ name: 'regex', matched: '/items/42' });
    expect(match({ path: '/items/x' })).toBeNull();
    expect(match({ host: 'A.test:8000', path: '/any' })).toEqual({ name: 'host', matched: '/' });
    expect(match({ host: 'b.test', path: '/any' })).toBeNull();
  });

  it('ranks by priority, highest first, then by id, highest first', () => {
    const low = '00000000-0000-4000-8000-000000000001';
    const high = '00000000-0000-4000-8000-000000000002';
    const match = matcher([
      expr('p1-low-id', 'http.path ^= "/"', 1, low),
      expr('p1-high-id', 'http.path ^= "/"', 1, high),
      expr('p5', 'http.path ^= "/five"', 5),
      expr('p9-regex', 'http.path ~ "^/five/nine"', 9),
    ]);
    expect(match({ path: '/x' })?.name).toBe('p1-high-id');
    expect(match({ path: '/five' })?.name).toBe('p5');
    expect(match({ path: '/five/nine' })?.name).toBe('p9-regex');
  });

  it('ranks expression routes before traditional ones, which still route as before', () => {
    const match = matcher([
      trad('trad-long', { paths: ['/shared/very/long/prefix'] }),
      trad('trad-only', { paths: ['/trad'] }),
      expr('expr', 'http.path ^= "/shared"'),
    ]);
    expect(match({ path: '/shared/very/long/prefix/x' })?.name).toBe('expr');
    expect(match({ path: '/trad/x' })).toEqual({ name: 'trad-only', matched: '/trad' });
  });

  it('matches traditional HTTP routes on sources and destinations (accepted under this flavor only)', () => {
    const match = matcher([
      trad('src', { paths: ['/n'], sources: [{ ip: '10.0.0.0/8' }] }),
      trad('dst', { paths: ['/n'], destinations: [{ ip: '192.168.1.1', port: 8443 }] }),
      trad('plain', { paths: ['/n'] }),
    ]);
    expect(match({ path: '/n', facts: { remoteAddress: '::ffff:10.2.3.4' } })?.name).toBe('src');
    expect(match({ path: '/n', facts: { remoteAddress: '11.0.0.1', localAddress: '192.168.1.1', localPort: 8443 } })?.name).toBe('dst');
    expect(match({ path: '/n', facts: { remoteAddress: '11.0.0.1', localAddress: '192.168.1.1', localPort: 8000 } })?.name).toBe('plain');
  });

  it('reads headers and queries; every value must match unless any(); lower() folds case', () => {
    const match = matcher([
      expr('lower', 'lower(http.headers.x_version) == "v2"', 10),
      expr('any', 'any(http.queries.tag) == "b"', 5),
      expr('all', 'http.queries.tag == "a"', 1),
      expr('contains', 'http.headers.user_agent contains "curl"', 0),
    ]);
    expect(match({ headers: { 'x-version': 'V2' } })?.name).toBe('lower');
    expect(match({ headers: { 'x-version': ['v2', 'V2'] } })?.name).toBe('lower');
    expect(match({ headers: { 'x-version': ['v2', 'v3'] } })).toBeNull();
    expect(match({ facts: { query: 'tag=a&tag=b' } })?.name).toBe('any');
    expect(match({ facts: { query: 'tag=a&tag=a' } })?.name).toBe('all');
    expect(match({ facts: { query: 'tag=a&tag=c' } })).toBeNull();
    expect(match({ headers: { 'user-agent': 'curl/8.0' } })?.name).toBe('contains');
    expect(match({})).toBeNull();
  });

  it('evaluates !, && and || (|| binding tighter), and path segments', () => {
    const match = matcher([
      expr('not', '!(http.method == "GET") && http.path == "/n"'),
      expr('mix', 'http.path == "/m" && http.method == "GET" || http.method == "PUT"'),
      expr('seg', 'http.path.segments.1 == "users" && http.path.segments.len == 3 && http.path.segments.0_1 == "v1/users"'),
    ]);
    expect(match({ method: 'POST', path: '/n' })?.name).toBe('not');
    expect(match({ method: 'GET', path: '/n' })).toBeNull();
    expect(match({ method: 'PUT', path: '/m' })?.name).toBe('mix');
    expect(match({ method: 'PUT', path: '/other' })).toBeNull();
    expect(match({ path: '/v1/users/7' })?.name).toBe('seg');
    expect(match({ path: '/v1/users' })).toBeNull();
  });

  it('reads net.* and tls.sni', () => {
    const match = matcher([
      expr('src', 'net.src.ip in 10.0.0.0/8 && net.src.port > 1000', 3),
      expr('dst', 'net.dst.port == 8443 && net.protocol == "https" && tls.sni == "a.test"', 2),
      expr('v6', 'net.src.ip == ::1', 1),
    ]);
    expect(match({ facts: { remoteAddress: '::ffff:10.1.2.3', remotePort: 5000 } })?.name).toBe('src');
    expect(match({ facts: { remoteAddress: '10.1.2.3', remotePort: 80 } })).toBeNull();
    expect(match({ sni: 'a.test', facts: { scheme: 'https', localPort: 8443 } })?.name).toBe('dst');
    expect(match({ facts: { scheme: 'https', localPort: 8443 } })).toBeNull();
    expect(match({ facts: { remoteAddress: '::1' } })?.name).toBe('v6');
  });

  it('files routes by host and path so that 10,000 routes answer the same as one', () => {
    const routes: Route[] = [];
    for (let i = 0; i < 10_000; i++) routes.push(expr(`r${i}`, `http.host == "h${i % 100}.test" && http.path ^= "/p${i}/" && http.method == "GET"`));
    const match = matcher(routes);
    expect(match({ host: 'h42.test', path: '/p9942/x' })).toEqual({ name: 'r9942', matched: '/p9942/' });
    expect(match({ host: 'h41.test', path: '/p9942/x' })).toBeNull();
  });

  it('refuses a snapshot whose expression does not parse', () => {
    expect(() => routerOf([expr('bad', 'http.path ^=')])).toThrow(/invalid expression of route/);
  });
});
