import { describe, expect, it } from '@jest/globals';
import type { Route } from '@gatehouse/core';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from './compile';
import { splitRouteId, uuidV5 } from './route-entries';

const service = makeService({ name: 'svc', url: 'http://upstream.test' });

function routerOf(routes: Route[]) {
  return compile(makeSnapshot({ services: [service], routes })).router;
}

function matchName(routes: Route[], request: { method?: string; host?: string; path: string; headers?: Record<string, string> }) {
  const match = routerOf(routes).match(request.method ?? 'GET', request.host, request.path, request.headers ?? {});
  return match ? { name: match.route.route.name, matched: match.matched } : null;
}

const route = (name: string, fields: Record<string, unknown>) => makeRoute({ name, service: { id: service.id }, ...fields });

describe('router', () => {
  it('matches snis on TLS requests only, and ranks a route with snis above one without (Kong: net.protocol != "https" || tls.sni)', () => {
    const routes = [
      route('any', { paths: ['/s'] }),
      route('named', { protocols: ['http', 'https'], paths: ['/s'], snis: ['a.test', '*.wild.test', 'pre.*'] }),
    ];
    const router = routerOf(routes);
    const sniName = (sni: string | undefined) => router.match('GET', undefined, '/s', {}, undefined, sni)?.route.route.name;
    expect(sniName('a.test')).toBe('named');
    expect(sniName('A.Test')).toBe('named');
    expect(sniName('x.wild.test')).toBe('named');
    expect(sniName('pre.anything')).toBe('named');
    expect(sniName('other.test')).toBe('any');
    expect(sniName('')).toBe('any');
    // a plain request does not read snis
    expect(sniName(undefined)).toBe('named');
  });

  it('routes grpc routes on the HTTP listeners', () => {
    const routes = [route('grpc', { protocols: ['grpc', 'grpcs'], paths: ['/helloworld.Greeter/'], strip_path: false })];
    const match = routerOf(routes).match('POST', undefined, '/helloworld.Greeter/SayHello', {});
    expect(match?.route.grpc).toBe(true);
    expect(match?.route.acceptsHttp).toBe(true);
  });

  it('treats plain paths as raw string prefixes, not segments', () => {
    const routes = [route('foo', { paths: ['/foo'] })];
    expect(matchName(routes, { path: '/foo' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/foo/bar' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/foobar' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/fo' })).toBeNull();
    expect(matchName(routes, { path: '/bar/foo' })).toBeNull();
  });

  it('prefers the longest matching prefix', () => {
    const routes = [route('short', { paths: ['/a'] }), route('long', { paths: ['/a/b/c'] }), route('mid', { paths: ['/a/b'] })];
    expect(matchName(routes, { path: '/a/b/c/d' })?.name).toBe('long');
    expect(matchName(routes, { path: '/a/b/x' })?.name).toBe('mid');
    expect(matchName(routes, { path: '/a/x' })?.name).toBe('short');
  });

  it('prefers routes matching on more kinds of attributes (host+path beats a longer path alone)', () => {
    const routes = [route('path-only', { paths: ['/api/v1/users'] }), route('host-and-path', { hosts: ['example.com'], paths: ['/api'] })];
    expect(matchName(routes, { host: 'example.com', path: '/api/v1/users' })?.name).toBe('host-and-path');
    expect(matchName(routes, { host: 'other.com', path: '/api/v1/users' })?.name).toBe('path-only');
  });

  it('prefers method+path over path alone', () => {
    const routes = [route('any', { paths: ['/x'] }), route('post', { paths: ['/x'], methods: ['POST'] })];
    expect(matchName(routes, { method: 'POST', path: '/x' })?.name).toBe('post');
    expect(matchName(routes, { method: 'GET', path: '/x' })?.name).toBe('any');
  });

  it('matches methods exactly', () => {
    const routes = [route('get', { methods: ['GET', 'HEAD'] })];
    expect(matchName(routes, { method: 'HEAD', path: '/' })?.name).toBe('get');
    expect(matchName(routes, { method: 'POST', path: '/' })).toBeNull();
  });

  it('prefers plain hosts over wildcard hosts', () => {
    const routes = [route('wild', { hosts: ['*.example.com'] }), route('plain', { hosts: ['api.example.com'] })];
    expect(matchName(routes, { host: 'api.example.com', path: '/' })?.name).toBe('plain');
    expect(matchName(routes, { host: 'www.example.com', path: '/' })?.name).toBe('wild');
  });

  it('matches prefix and suffix wildcards, any port, case-insensitively', () => {
    const routes = [route('suffix', { hosts: ['*.example.com'] }), route('prefix', { hosts: ['example.*'] })];
    expect(matchName(routes, { host: 'A.B.Example.com:8000', path: '/' })?.name).toBe('suffix');
    expect(matchName(routes, { host: 'example.org', path: '/' })?.name).toBe('prefix');
    expect(matchName(routes, { host: 'example.com', path: '/' })?.name).toBe('prefix');
    expect(matchName(routes, { host: 'notexample.org', path: '/' })).toBeNull();
  });

  it('matches a host with a port only on that port, and a host without a port on any', () => {
    const routes = [route('with-port', { hosts: ['a.test:8443'] }), route('any-port', { hosts: ['b.test'] })];
    expect(matchName(routes, { host: 'a.test:8443', path: '/' })?.name).toBe('with-port');
    expect(matchName(routes, { host: 'a.test:8000', path: '/' })).toBeNull();
    expect(matchName(routes, { host: 'b.test:1234', path: '/' })?.name).toBe('any-port');
  });

  it('needs a Host header for a host route', () => {
    expect(matchName([route('h', { hosts: ['a.test'] })], { path: '/' })).toBeNull();
  });

  it('tries regex paths before prefix paths, anchored at the start', () => {
    const routes = [route('prefix', { paths: ['/users/profile'] }), route('regex', { paths: ['~/users/\\d+'] })];
    expect(matchName(routes, { path: '/users/42/x' })).toEqual({ name: 'regex', matched: '/users/42' });
    expect(matchName(routes, { path: '/users/profile' })?.name).toBe('prefix');
    expect(matchName(routes, { path: '/x/users/42' })).toBeNull();
  });

  it('orders regex paths by regex_priority', () => {
    const routes = [route('low', { paths: ['~/items/.*'], regex_priority: 1 }), route('high', { paths: ['~/items/\\d+'], regex_priority: 5 })];
    expect(matchName(routes, { path: '/items/7' })?.name).toBe('high');
    expect(matchName(routes, { path: '/items/abc' })?.name).toBe('low');
  });

  it('prefers more header conditions, and matches header values case-insensitively', () => {
    const routes = [
      route('one', { paths: ['/h'], headers: { 'x-version': ['v1', 'v2'] } }),
      route('two', { paths: ['/h'], headers: { 'x-version': ['v1'], 'x-tenant': ['acme'] } }),
    ];
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'V1', 'x-tenant': 'acme' } })?.name).toBe('two');
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'v2' } })?.name).toBe('one');
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'v3' } })).toBeNull();
  });

  it('gives each path of a route its own place in the order', () => {
    const routes = [route('multi', { paths: ['/a', '/b/c/d'] }), route('mid', { paths: ['/b/c'] })];
    expect(matchName(routes, { path: '/b/c/d/e' })).toEqual({ name: 'multi', matched: '/b/c/d' });
    expect(matchName(routes, { path: '/b/c/x' })?.name).toBe('mid');
  });

  it('leaves out routes of a disabled service', () => {
    const disabled = makeService({ name: 'off', url: 'http://off.test', enabled: false });
    const snapshot = makeSnapshot({ services: [disabled], routes: [makeRoute({ paths: ['/off'], service: { id: disabled.id } })] });
    expect(compile(snapshot).router.match('GET', undefined, '/off', {})).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Kong 3.9's own router cases (spec/01-unit/08-router_spec.lua, flavor traditional_compatible), with its route ids:
// equal priorities are broken by id, so the ids are part of each case.
// ---------------------------------------------------------------------------------------------------------------

const kongId = (suffix: string) => `e8fb37f1-102d-461e-9c51-6608a6bb8${suffix}`;

/** Routes given as Kong's spec writes them (`id` suffix plus fields); `service: false` for a route without one. */
function kongRouter(routes: Array<Record<string, unknown>>) {
  const built = routes.map(({ id, service: withService, ...fields }) =>
    makeRoute({ id: kongId(id as string), ...(withService === false ? {} : { service: { id: service.id } }), ...fields }),
  );
  return routerOf(built);
}

type Headers = Record<string, string | string[]>;
/** [what, method, path, Host header, headers, the expected route's position in the list (1-based, Kong's use_case index) or null] */
type KongCase = [string, string, string, string | undefined, Headers, number | null];

function expectCases(routes: Array<Record<string, unknown>>, cases: KongCase[], localPort?: number) {
  const router = kongRouter(routes);
  for (const [what, method, path, host, headers, expected] of cases) {
    const match = router.match(method, host, path, headers, localPort);
    const got = match === null ? null : routes.findIndex((r) => kongId(r.id as string) === match.route.route.id) + 1;
    expect({ what, route: got }).toEqual({ what, route: expected });
  }
}

const selectUseCase: Array<Record<string, unknown>> = [
  { id: '101', hosts: ['domain-1.org', 'domain-2.org'] },
  { id: '102', methods: ['TRACE'] },
  { id: '103', paths: ['/my-route'] },
  { id: '104', paths: ['/route-4'], hosts: ['domain-1.org', 'domain-2.org'] },
  { id: '105', hosts: ['domain-1.org', 'domain-2.org'], methods: ['POST', 'PUT', 'PATCH'] },
  { id: '106', methods: ['POST', 'PUT', 'PATCH'], paths: ['/route-6'] },
  { id: '107', hosts: ['domain-with-uri-1.org', 'domain-with-uri-2.org'], methods: ['POST', 'PUT', 'PATCH'], paths: ['/my-route-uri'] },
  { id: '108', service: false, paths: ['/serviceless'] },
  { id: '109', headers: { location: ['my-location-1', 'my-location-2'] } },
  { id: '110', headers: { location: ['my-location-1'], version: ['v1', 'v2'] } },
  { id: '111', headers: { location: ['my-location-1', 'my-location-2'] }, paths: ['/headers-uri'] },
  {
    id: '112',
    hosts: ['domain-with-headers-1.org', 'domain-with-headers-2.org'],
    headers: { location: ['my-location-1', 'my-location-2'] },
    methods: ['POST', 'PUT', 'PATCH'],
    paths: ['/headers-host-uri-method'],
  },
  { id: '113', hosts: ['domain-1.org:321', 'domain-2.org'] },
  { id: '114', hosts: ['domain-3.org:321'] },
  { id: '115', headers: { user_agent: ['~*windows|linux|os\\s+x\\s*[\\d\\._]+|solaris|bsd'] } },
];

describe("Kong's router spec: select()", () => {
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.116 Safari/537.36';
  it.each<KongCase>([
    ['[host]', 'GET', '/', 'domain-1.org', {}, 1],
    ['[host] ignores default port', 'GET', '/', 'domain-1.org:80', {}, 1],
    ['[host] matches specific port', 'GET', '/', 'domain-1.org:321', {}, 13],
    ['[host] matches specific port on port-only route', 'GET', '/', 'domain-3.org:321', {}, 14],
    ['[host] fails just because of port on port-only route', 'GET', '/', 'domain-3.org:123', {}, null],
    ['[uri]', 'GET', '/my-route', 'domain.org', {}, 3],
    ['[uri + empty host]', 'GET', '/my-route-uri', '', {}, 3],
    ['[method]', 'TRACE', '/', 'domain.org', {}, 2],
    ['[host + uri]', 'GET', '/route-4', 'domain-1.org', {}, 4],
    ['[host + method]', 'POST', '/', 'domain-1.org', {}, 5],
    ['[uri + method]', 'PUT', '/route-6', 'domain.org', {}, 6],
    ['[host + uri + method]', 'PUT', '/my-route-uri', 'domain-with-uri-2.org', {}, 7],
    ['single [headers] value', 'GET', '/', undefined, { location: 'my-location-1' }, 9],
    ['single [headers] value, the second', 'GET', '/', undefined, { location: 'my-location-2' }, 9],
    ['single [headers] value, sent on two lines', 'GET', '/', undefined, { location: ['my-location-3', 'my-location-2'] }, 9],
    ['single [headers] value, no value matches', 'GET', '/', undefined, { location: 'my-location-3' }, null],
    ['single [headers] value, no line matches', 'GET', '/', undefined, { location: ['my-location-3', 'foo'] }, null],
    ['single [headers] regex value', 'GET', '/', undefined, { 'user-agent': ua }, 15],
    ['multiple [headers] values', 'GET', '/', undefined, { location: 'my-location-1', version: 'v1' }, 10],
    ['multiple [headers] values, v2', 'GET', '/', undefined, { location: 'my-location-1', version: 'v2' }, 10],
    ['multiple [headers] values, two lines', 'GET', '/', undefined, { location: ['my-location-3', 'my-location-1'], version: 'v2' }, 10],
    ['multiple [headers] values, falls back to one header', 'GET', '/', undefined, { location: ['my-location-3', 'my-location-2'], version: 'v2' }, 9],
    ['[headers + uri]', 'GET', '/headers-uri', undefined, { location: 'my-location-2' }, 11],
    ['[host + headers + uri + method]', 'PUT', '/headers-host-uri-method', 'domain-with-headers-1.org', { location: 'my-location-2' }, 12],
    ['[serviceless]', 'GET', '/serviceless', undefined, {}, 8],
    ['[uri prefix] matches when given [uri] is in request URI prefix', 'GET', '/my-route/some/path', 'domain.org', {}, 3],
    ['misses: invalid [host]', 'GET', '/', 'domain-3.org', {}, null],
    ['misses: invalid host in [host + uri]', 'GET', '/route-4', 'domain-3.org', {}, null],
    ['misses: invalid method in [host + uri + method]', 'GET', '/some-uri', 'domain-with-uri-2.org', {}, null],
    ['misses: invalid uri in [host + uri + method]', 'PUT', '/some-uri-foo', 'domain-with-uri-2.org', {}, null],
    ['misses: [uri] in URI but not in prefix', 'GET', '/some-other-prefix/my-route', 'domain.org', {}, null],
    ['misses: invalid [headers]', 'GET', '/', undefined, { location: 'invalid-location' }, null],
    ['misses: invalid headers in [headers + uri]', 'GET', '/headers-uri', undefined, { location: 'invalid-location' }, null],
    ['misses: invalid headers in [headers + uri + method]', 'PUT', '/headers-uri-method', undefined, { location: 'invalid-location' }, null],
    ['misses: invalid headers in [headers + host + uri + method]', 'PUT', '/headers-host-uri-method', undefined, { location: 'invalid-location', host: 'domain-with-headers-1.org' }, null],
  ])('%s', (...c) => expectCases(selectUseCase, [c]));

  it('root / [uri]: a route on / is the catch-all and supersedes nothing', () => {
    const routes = [{ id: '10f', paths: ['/'] }, ...selectUseCase];
    expectCases(routes, [
      ['request with [method]', 'GET', '/', 'domain.org', {}, 1],
      ['does not supersede another route', 'GET', '/my-route', 'domain.org', {}, 4],
      ['does not supersede another route, deeper', 'GET', '/my-route/hello/world', 'domain.org', {}, 4],
      ['acts as a catch-all route', 'GET', '/foobar/baz', 'domain.org', {}, 1],
    ]);
  });

  it('multiple routes of same category with conflicting values: matches correct route', () => {
    const same = [1, 2, 3, 4, 5].map((i) => ({ id: `11${i}`, hosts: ['domain.org'], paths: ['/my-uri'] }));
    const routes = [...selectUseCase.filter((r) => !['111', '112', '113', '114', '115'].includes(r.id as string)), ...same, { id: '121', hosts: ['domain.org'], paths: ['/my-target-uri'] }];
    const router = kongRouter(routes);
    expect(router.match('GET', 'domain.org', '/my-target-uri', {})?.route.route.id).toBe(kongId('121'));
  });
});

describe("Kong's router spec: [uri prefix]", () => {
  it('does not supersede another route with a longer [uri]', () => {
    expectCases(
      [{ id: '101', paths: ['/my-route/hello'] }, { id: '102', paths: ['/my-route'] }],
      [
        ['longer', 'GET', '/my-route/hello', 'domain.org', {}, 1],
        ['longer, deeper', 'GET', '/my-route/hello/world', 'domain.org', {}, 1],
        ['shorter', 'GET', '/my-route', 'domain.org', {}, 2],
        ['shorter, deeper', 'GET', '/my-route/world', 'domain.org', {}, 2],
      ],
    );
  });

  it.each([
    ['[methods]', { methods: ['POST', 'PUT', 'GET'] }],
    ['[hosts]', { hosts: ['domain.org'] }],
  ])('does not supersede another route with a longer [uri] while %s are also defined', (_, fields) => {
    expectCases(
      [{ id: '101', ...fields, paths: ['/my-route'] }, { id: '102', ...fields, paths: ['/my-route/hello'] }],
      [
        ['longer', 'GET', '/my-route/hello', 'domain.org', {}, 2],
        ['longer, deeper', 'GET', '/my-route/hello/world', 'domain.org', {}, 2],
        ['shorter', 'GET', '/my-route', 'domain.org', {}, 1],
        ['shorter, deeper', 'GET', '/my-route/world', 'domain.org', {}, 1],
      ],
    );
  });

  it('does not supersede another route with a longer [uri] when a better [uri] match exists for another [host]', () => {
    expectCases(
      [
        { id: '101', hosts: ['example.com'], paths: ['/my-route'] },
        { id: '102', hosts: ['example.com'], paths: ['/my-route/hello'] },
        { id: '103', hosts: ['example.net'], paths: ['/my-route/hello/world'] },
      ],
      [
        ['', 'GET', '/my-route/hello/world', 'example.com', {}, 2],
        ['deeper', 'GET', '/my-route/hello/world/and/goodnight', 'example.com', {}, 2],
      ],
    );
  });

  it('only matches [uri prefix] as a prefix (anchored mode)', () => {
    expectCases(
      [{ id: '101', paths: ['/something/my-route'] }, { id: '102', hosts: ['example.com'], paths: ['/my-route'] }],
      [['', 'GET', '/something/my-route', 'example.com', {}, 1]],
    );
  });
});

describe("Kong's router spec: [uri regex]", () => {
  it.each<[string, Array<Record<string, unknown>>, KongCase[]]>([
    ['matches with [uri regex]', [{ id: '101', paths: ['~/users/\\d+/profile'] }], [['', 'GET', '/users/123/profile', 'domain.org', {}, 1]]],
    [
      'matches the right route when several ones have a [uri regex]',
      [
        { id: '101', paths: ['~/route/persons/\\d{3}'] },
        { id: '102', paths: ['~/route/persons/\\d{3}/following'] },
        { id: '103', paths: ['~/route/persons/\\d{3}/[a-z]+'] },
      ],
      [['', 'GET', '/route/persons/456', 'domain.org', {}, 1]],
    ],
    [
      'matches a [uri regex] even if a [prefix uri] got a match',
      [{ id: '101', paths: ['/route/persons'] }, { id: '102', paths: ['~/route/persons/\\d+/profile'] }],
      [['', 'GET', '/route/persons/123/profile', 'domain.org', {}, 2]],
    ],
    [
      'matches a [uri regex] even if a [uri] got an exact match',
      [{ id: '101', paths: ['/route/fixture'] }, { id: '102', paths: ['~/route/(fixture)'] }],
      [['', 'GET', '/route/fixture', 'domain.org', {}, 2]],
    ],
    [
      'matches a [uri regex + host] even if a [prefix uri] got a match',
      [
        { id: '101', hosts: ['route.com'], paths: ['/pat'] },
        { id: '102', hosts: ['route.com'], paths: ['/path'], methods: ['POST'] },
        { id: '103', hosts: ['route.com'], paths: ['~/(path)'] },
      ],
      [['', 'GET', '/path', 'route.com', {}, 3]],
    ],
    [
      'matches from the beginning of the request URI [uri regex]',
      [{ id: '101', paths: ['~/prefix/[0-9]+'] }],
      [
        ['sanity', 'GET', '/prefix/123', 'domain.org', {}, 1],
        ['not anchored elsewhere', 'GET', '/extra/prefix/123', 'domain.org', {}, null],
      ],
    ],
  ])('%s', (_, routes, cases) => expectCases(routes, cases));
});

describe("Kong's router spec: [wildcard host]", () => {
  const wild = [
    { id: '101', hosts: ['*.route.com'] },
    { id: '102', hosts: ['route.*'] },
  ];

  it.each<[string, Array<Record<string, unknown>>, KongCase[]]>([
    ['matches leftmost wildcards', wild, [['', 'GET', '/', 'foo.route.com', {}, 1]]],
    ['matches rightmost wildcards', wild, [['', 'GET', '/', 'route.org', {}, 2]]],
    [
      'matches any port in request',
      wild,
      [
        ['rightmost', 'GET', '/', 'route.org:123', {}, 2],
        ['leftmost', 'GET', '/', 'foo.route.com:123', {}, 1],
      ],
    ],
    [
      'matches port-specific routes',
      [...wild, { id: '103', hosts: ['*.route.net:123'] }, { id: '104', hosts: ['route.*:123'] }],
      [
        ['the right port', 'GET', '/', 'foo.route.net:123', {}, 3],
        ['another port', 'GET', '/', 'foo.route.net:456', {}, null],
        ['port-specific first', 'GET', '/', 'route.org:123', {}, 4],
      ],
    ],
    [
      'prefers port-specific even for http default port',
      [...wild, { id: '103', hosts: ['route.*:80'] }],
      [
        ['no port matches any', 'GET', '/', 'route.org:123', {}, 2],
        ['port 80', 'GET', '/', 'route.org:80', {}, 3],
      ],
    ],
    [
      'prefers port-specific even for https default port',
      [...wild, { id: '103', hosts: ['route.*:443'] }],
      [
        ['no port matches any', 'GET', '/', 'route.org:123', {}, 2],
        ['port 443', 'GET', '/', 'route.org:443', {}, 3],
      ],
    ],
    [
      'does not take precedence over a plain host',
      [{ id: '103', hosts: ['plain.route.com'] }, ...wild, { id: '104', hosts: ['route.com'] }],
      [
        ['plain route.com', 'GET', '/', 'route.com', {}, 4],
        ['wildcard route.*', 'GET', '/', 'route.org', {}, 3],
        ['plain plain.route.com', 'GET', '/', 'plain.route.com', {}, 1],
        ['wildcard *.route.com', 'GET', '/', 'foo.route.com', {}, 2],
      ],
    ],
    [
      'matches [wildcard host + path] even if a similar [plain host] exists',
      [
        { id: '101', hosts: ['*.route.com'], paths: ['/path1'] },
        { id: '102', hosts: ['plain.route.com'], paths: ['/path2'] },
      ],
      [
        ['wildcard', 'GET', '/path1', 'plain.route.com', {}, 1],
        ['plain', 'GET', '/path2', 'plain.route.com', {}, 2],
      ],
    ],
    [
      'submatch_weight [wildcard host port] > [wildcard host]',
      [
        { id: '101', hosts: ['route.*'] },
        { id: '102', hosts: ['route.*:80', 'route.com.*'] },
      ],
      [['', 'GET', '/', 'route.org:80', {}, 2]],
    ],
    [
      'matches a [wildcard host + port] even if a [wildcard host] matched',
      [
        { id: '101', hosts: ['route.*'] },
        { id: '102', hosts: ['route.*:123'] },
        { id: '103', hosts: ['route.*:80'] },
      ],
      [['explicit port', 'GET', '/', 'route.org:123', {}, 2]],
    ],
    [
      'matches [wildcard/plain + uri + method]',
      // Kong's spec gives this route the id of the first one again (…8101); here it has one of its own
      [...wild, { id: '109', hosts: ['*.domain.com', 'example.com'], paths: ['/path'], methods: ['GET', 'TRACE'] }],
      [
        ['wrong method', 'POST', '/path', 'foo.domain.com', {}, null],
        ['wildcard', 'GET', '/path', 'foo.domain.com', {}, 3],
        ['plain', 'TRACE', '/path', 'example.com', {}, 3],
      ],
    ],
    [
      '[wildcard host] + [uri regex]',
      [
        { id: '101', hosts: ['*.example.com'], paths: ['~/users/\\d+/profile'] },
        { id: '102', hosts: ['*.example.com'], paths: ['/users'] },
      ],
      [
        ['regex', 'GET', '/users/123/profile', 'test.example.com', {}, 1],
        ['prefix', 'GET', '/users', 'test.example.com', {}, 2],
      ],
    ],
  ])('%s', (_, routes, cases) => expectCases(routes, cases));

  it('a Host header without a port stands for the port the request came in on (net.dst.port)', () => {
    const routes = [
      { id: '101', hosts: ['route.*'] },
      { id: '102', hosts: ['route.*:123'] },
      { id: '103', hosts: ['route.*:80'] },
      { id: '104', hosts: ['plain.test:8000'] },
    ];
    expectCases(routes, [['implicit port 80', 'GET', '/', 'route.org', {}, 3]], 80);
    expectCases(routes, [['implicit port 8000', 'GET', '/', 'route.org', {}, 1]], 8000);
    expectCases(routes, [['plain host on the listener port', 'GET', '/', 'plain.test', {}, 4]], 8000);
    expectCases(routes, [['plain host on another port', 'GET', '/', 'plain.test', {}, null]], 8001);
    expectCases(routes, [['an explicit port wins over the listener port', 'GET', '/', 'route.org:123', {}, 2]], 80);
  });
});

describe("Kong's router spec: [headers]", () => {
  it('evaluates Routes with more [headers] first', () => {
    expectCases(
      [
        { id: '101', headers: { version: ['v1', 'v2'], user_agent: ['foo', 'bar'] } },
        { id: '102', headers: { version: ['v1', 'v2'], user_agent: ['foo', 'bar'], location: ['east', 'west'] } },
      ],
      [['', 'GET', '/', undefined, { version: 'v1', 'user-agent': 'foo', location: ['north', 'west'] }, 2]],
    );
  });

  it('names are case-insensitive (and `_` stands for `-`)', () => {
    expectCases(
      [
        { id: '101', headers: { USER_AGENT: ['foo', 'bar'] } },
        { id: '102', headers: { user_agent: ['baz'] } },
      ],
      [
        ['upper-case name', 'GET', '/', undefined, { 'user-agent': 'foo' }, 1],
        ['lower-case name', 'GET', '/', undefined, { 'user-agent': 'baz' }, 2],
      ],
    );
  });

  it('matches values in a case-insensitive way', () => {
    expectCases(
      [
        { id: '101', headers: { user_agent: ['foo', 'bar'] } },
        { id: '102', headers: { user_agent: ['BAZ'] } },
      ],
      [
        ['FOO', 'GET', '/', undefined, { 'user-agent': 'FOO' }, 1],
        ['baz', 'GET', '/', undefined, { 'user-agent': 'baz' }, 2],
      ],
    );
  });

  it('a header sent on one line with a comma is one value, not a list', () => {
    expectCases([{ id: '101', headers: { location: ['east'] } }], [['joined', 'GET', '/', undefined, { location: 'west, east' }, null]]);
  });
});

describe("Kong's router spec: normalization stopgap measurements (the router matches the path it is given)", () => {
  const routes = [
    { id: '100', paths: ['/plain/a.b.c'] },
    { id: '101', paths: ['/plain/a.b%58c'] },
    { id: '102', paths: ['~/reg%65x/\\d+'] },
    { id: '103', paths: ['~/regex-meta/%5Cd\\+%2E'] },
    { id: '104', paths: ['~/regex-reserved%2Fabc'] },
  ];
  it.each<KongCase>([
    ['plain text path', 'GET', '/plain/a.b.c', 'example.com', {}, 1],
    ['a configured path is not normalised', 'GET', '/plain/a.bXc', 'example.com', {}, null],
    ['percent-encoded as configured', 'GET', '/plain/a.b%58c', 'example.com', {}, 2],
    ['dot is no wildcard', 'GET', '/plain/aab.c', 'example.com', {}, null],
    ['regex is not normalised', 'GET', '/regex/123', 'example.com', {}, null],
    ['regex as configured', 'GET', '/reg%65x/123', 'example.com', {}, 3],
    ['regex meta characters stay literal', 'GET', '/regex/\\d+', 'example.com', {}, null],
    ['escaped meta: no digit class', 'GET', '/regex-meta/123a', 'example.com', {}, null],
    ['escaped meta: decoded text', 'GET', '/regex-meta/\\d+.', 'example.com', {}, null],
    ['escaped meta: as sent', 'GET', '/regex-meta/%5Cd+%2E', 'example.com', {}, 4],
    ['reserved characters: decoded', 'GET', '/regex-reserved/abc', 'example.com', {}, null],
    ['reserved characters: as sent', 'GET', '/regex-reserved%2Fabc', 'example.com', {}, 5],
  ])('%s', (...c) => expectCases(routes, [c]));
});

describe("Kong's router spec: edge-cases", () => {
  it('[host] and [uri] have higher priority than [method]', () => {
    expectCases(selectUseCase.slice(0, 7), [
      ['host', 'TRACE', '/', 'domain-2.org', {}, 1],
      ['uri', 'TRACE', '/my-route', 'domain.org', {}, 3],
    ]);
  });

  it.each<[string, Array<Record<string, unknown>>, KongCase[]]>([
    [
      'half [uri] and [host] match does not supersede another route',
      [
        { id: '101', hosts: ['host1.com'], paths: ['/v1/path'] },
        { id: '102', hosts: ['host2.com'], paths: ['/'] },
      ],
      [
        ['host1', 'GET', '/v1/path', 'host1.com', {}, 1],
        ['host2', 'GET', '/v1/path', 'host2.com', {}, 2],
      ],
    ],
    [
      'half [wildcard host] and [method] match does not supersede another route',
      [
        { id: '101', hosts: ['host.*'], methods: ['GET'] },
        { id: '102', hosts: ['host.*'], methods: ['POST'] },
      ],
      [
        ['GET', 'GET', '/', 'host.com', {}, 1],
        ['POST', 'POST', '/', 'host.com', {}, 2],
      ],
    ],
    [
      'half [uri regex] and [method] match does not supersede another route',
      [
        { id: '101', methods: ['GET'], paths: ['~/users/\\d+/profile'] },
        { id: '102', methods: ['POST'], paths: ['~/users/\\d*/profile'] },
      ],
      [
        ['GET', 'GET', '/users/123/profile', 'domain.org', {}, 1],
        ['POST', 'POST', '/users/123/profile', 'domain.org', {}, 2],
      ],
    ],
    [
      '[method] does not supersede [uri prefix]',
      [
        { id: '101', methods: ['GET'] },
        { id: '102', paths: ['/example'] },
      ],
      [
        ['exact', 'GET', '/example', 'domain.org', {}, 2],
        ['deeper', 'GET', '/example/status/200', 'domain.org', {}, 2],
      ],
    ],
    [
      '[method] does not supersede [wildcard host]',
      [
        { id: '101', methods: ['GET'] },
        { id: '102', hosts: ['domain.*'] },
      ],
      [
        ['other host', 'GET', '/', 'nothing.com', {}, 1],
        ['wildcard host', 'GET', '/', 'domain.com', {}, 2],
      ],
    ],
    [
      'more [headers] has priority over longer [paths]',
      [
        { id: '101', headers: { version: ['v1'] }, paths: ['/my-route/hello'] },
        { id: '102', headers: { version: ['v1'], location: ['us-east'] }, paths: ['/my-route'] },
      ],
      [
        ['', 'GET', '/my-route/hello', 'domain.org', { version: 'v1', location: 'us-east' }, 2],
        ['deeper', 'GET', '/my-route/hello/world', 'domain.org', { version: 'v1', location: 'us-east' }, 2],
      ],
    ],
  ])('%s', (_, routes, cases) => expectCases(routes, cases));
});

describe("Kong's router spec: paths of one route in several groups, and regex_priority", () => {
  it('[prefix matching ignore regex_priority]', () => {
    expectCases(
      [
        { id: '101', paths: ['/.*'], hosts: ['domain-1.org'] },
        { id: '102', paths: ['/'], hosts: ['domain-2.org'], regex_priority: 5 },
        { id: '103', paths: ['/v1'], hosts: ['domain-2.org'] },
      ],
      [['', 'GET', '/v1', 'domain-2.org', {}, 3]],
    );
  });

  it('[both regex and prefix]: assigns different priorities to regex and non-regex path', () => {
    expectCases(
      [
        { id: '101', paths: ['~/some/thing/else', '/foo'], hosts: ['domain-1.org'] },
        { id: '102', paths: ['/foo/bar'], hosts: ['domain-1.org'] },
      ],
      [
        ['regex', 'GET', '/some/thing/else', 'domain-1.org', {}, 1],
        ['longer prefix', 'GET', '/foo/bar', 'domain-1.org', {}, 2],
      ],
    );
  });

  it('[overlapping prefixes]: assigns different priorities to each path', () => {
    expectCases(
      [
        { id: '101', paths: ['/foo', '/foo/bar/baz'], hosts: ['domain-1.org'] },
        { id: '102', paths: ['/foo/bar'], hosts: ['domain-1.org'] },
      ],
      [
        ['short', 'GET', '/foo', 'domain-1.org', {}, 1],
        ['middle', 'GET', '/foo/bar', 'domain-1.org', {}, 2],
        ['long', 'GET', '/foo/bar/baz', 'domain-1.org', {}, 1],
      ],
    );
  });

  it('[can create route with multiple paths and no service]', () => {
    expectCases([{ id: '101', service: false, paths: ['/foo', '/foo/bar/baz'] }], [['', 'GET', '/foo/bar/baz/x', undefined, {}, 1]]);
  });
});

describe("Kong's router spec: exec(), stripped paths (what the match strips)", () => {
  const routes = [
    { id: '101', paths: ['/my-route', '/xx-route'] },
    { id: '102', methods: ['POST'], paths: ['/my-route', '/xx-route'], strip_path: false },
  ];
  it.each([
    ['strips the specified paths from the given uri if matching', 'GET', '/my-route/hello/world', '101', '/my-route'],
    ['strips if matched URI is plain (not a prefix)', 'GET', '/my-route', '101', '/my-route'],
    ['matches the other path of the same length', 'GET', '/xx-route', '101', '/xx-route'],
    ["doesn't strip if 'strip_uri' is not enabled (the route with a method ranks first)", 'POST', '/my-route/hello/world', '102', '/my-route'],
  ])('%s', (_, method, path, id, matched) => {
    const match = kongRouter(routes).match(method, 'domain.org', path, {});
    expect({ id: match?.route.route.id, matched: match?.matched }).toEqual({ id: kongId(id), matched });
  });

  it.each([
    ['does not strip root / URI', '/', '/my-route/hello/world', '/'],
    ['strips url encoded paths', '/endel%2Fst', '/endel%2Fst', '/endel%2Fst'],
    ['strips a [uri regex]', '~/users/\\d+/profile', '/users/123/profile/hello/world', '/users/123/profile'],
    ['strips a [uri regex] with a capture group', '~/users/(\\d+)/profile', '/users/123/profile/hello/world', '/users/123/profile'],
  ])('%s', (_, routePath, path, matched) => {
    expect(kongRouter([{ id: '101', paths: [routePath] }]).match('GET', 'domain.org', path, {})?.matched).toBe(matched);
  });
});

describe('equal priorities: Kong tries the highest matcher id first', () => {
  it('between two routes, whatever their creation order or the snapshot order', () => {
    const low = { id: '101', paths: ['/same'], created_at: 1 };
    const high = { id: '102', paths: ['/same'], created_at: 2 };
    expectCases([low, high], [['high id, created last', 'GET', '/same', undefined, {}, 2]]);
    expectCases([high, low], [['high id, listed first', 'GET', '/same', undefined, {}, 1]]);
    expectCases([{ ...low, created_at: 3 }, high], [['high id, created first', 'GET', '/same', undefined, {}, 2]]);
  });

  it("a group of a split route competes with the id Kong derives for it, not the route's", () => {
    // route …8101's paths fall in two groups (lengths 2 and 5); its `/same` group's id is f3f66107-…
    expect(splitRouteId(kongId('101'), 2)).toBe('f3f66107-db02-53dc-baaf-ff30ef99a039');
    const split = { id: '101', paths: ['/a', '/same'] };
    expectCases([split, { id: '1ff', paths: ['/same'] }], [['beats a higher route id', 'GET', '/same', undefined, {}, 1]]);
    const router = routerOf([
      makeRoute({ id: kongId('101'), service: { id: service.id }, paths: ['/a', '/same'] }),
      makeRoute({ id: 'f4000000-0000-4000-8000-000000000000', service: { id: service.id }, paths: ['/same'] }),
    ]);
    expect(router.match('GET', undefined, '/same', {})?.route.route.id).toBe('f4000000-0000-4000-8000-000000000000');
    expect(router.match('GET', undefined, '/a', {})?.route.route.id).toBe(kongId('101'));
  });

  it('derives UUID v5 ids as resty.jit-uuid does (its documented examples)', () => {
    expect(uuidV5('e6ebd542-06ae-11e6-8e82-bba81706b27d', 'hello')).toBe('4850816f-1658-5890-8bfd-1ed14251f1f0');
    expect(uuidV5('e6ebd542-06ae-11e6-8e82-bba81706b27d', 'foobar')).toBe('c9be99fc-326b-5066-bdba-dcd31a6d01ab');
});
});
