// Kong's own specs for cors (spec/03-plugins/13-cors/01-access_spec.lua), ip-restriction's IPv6 suite behind a trusted
// proxy (17-ip-restriction/02-access_spec.lua, X-Real-IP) and request-size-limiting's Content-Length requirement
// (12-request-size-limiting), through the real admin API and proxy in both topologies, with Kong's `it` names; and
// decision 32: plugin configs that would set hop-by-hop or framing headers are refused. Kong routes by host; these
// routes are paths (`/cors1` for Kong's `cors1.test`). The data planes trust 127.0.0.1 (GATEHOUSE_TRUSTED_IPS).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts } from '@gatehouse/testkit';
import { startHeaderUpstream, type HeaderUpstream } from './support/header-upstream';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const CORS_DEFAULT_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT';

/** Kong's regex test cases: origins, and per request Origin whether it is accepted (true, or the origin sent back). */
const REGEX_CASES: Array<{ origins: string[]; tests: Record<string, boolean | string> }> = [
  { origins: ['foo.test'], tests: { 'http://evil.test': 'foo.test', 'http://foo.test:8000': 'foo.test', 'https://bar.test:1234': 'foo.test' } },
  { origins: ['https://bar.test:1234'], tests: { 'http://evil.test': 'https://bar.test:1234', 'https://bar.test:1234': 'https://bar.test:1234' } },
  {
    origins: ['foo\\.test'],
    tests: { 'http://evil.test': false, 'http://foo.test': true, 'http://foo.test.evil.test': false, 'http://something.foo.test': false, 'http://foo.test:80': 'http://foo.test', 'http://foo.test:8000': true, 'https://foo.test:8000': true, 'http://foobtest': false },
  },
  {
    origins: ['(.*[./])?foo\\.test'],
    tests: { 'http://evil.test': false, 'http://foo.test': true, 'http://foo.test.evil.test': false, 'http://something.foo.test': true, 'http://evilfoo.test': false, 'http://foo.test:80': 'http://foo.test', 'http://foo.test:8000': true, 'https://foo.test:8000': true },
  },
  { origins: ['(.*[./])?foo\\.test:8000'], tests: { 'http://foo.test': false, 'http://foo.test:80': false, 'http://foo.test:8000': true, 'https://foo.test:8000': true, 'http://foo.test:90': false } },
  { origins: ['https://(.*[.])?foo\\.test:8000'], tests: { 'http://foo.test:8000': false, 'https://foo.test:8000': true, 'http://something.foo.test': false } },
  {
    origins: ['^http://(.*[.])?foo\\.test(:(80|90))?$'],
    tests: { 'http://foo.test': true, 'http://something.foo.test': true, 'http://foo.test:80': 'http://foo.test', 'http://foo.test:8000': false, 'https://foo.test:8000': false, 'http://foo.test:90': true },
  },
  { origins: ['foo.test', 'bar.test'], tests: { 'http://foo.test': false, 'http://foo.test:80': false, 'https://bar.test:1234': false } },
  { origins: ['http://foo.test', 'https://bar.test:1234'], tests: { 'http://foo.test': true, 'http://foo.test:80': 'http://foo.test', 'http://foo.test:8000': false, 'https://bar.test:1234': true } },
  { origins: ['bar.test', '(.*\\.)?foo\\.test'], tests: { 'http://foo.test': true, 'http://foo.test.evil.test': false, 'http://something.foo.test': true, 'http://foo.test:80': 'http://foo.test', 'http://foo.test:90': true } },
];

describe.each(TOPOLOGIES)('Kong specs: cors, ip-restriction, request-size-limiting (%s)', (name) => {
  let topology: Topology;
  let upstream: HeaderUpstream;

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
  const url = (path: string) => `${topology.proxyUrl}${path}`;

  /** a service and route named `label` at /label, with the given plugins on the route */
  async function routeWith(label: string, plugins: Array<Record<string, unknown>>, serviceUrl = `${upstream.url}/`): Promise<void> {
    await created('/services', { name: label, url: serviceUrl });
    await created(`/services/${label}/routes`, { name: label, paths: [`/${label}`] });
    for (const plugin of plugins) await created(`/routes/${label}/plugins`, plugin);
  }
  const cors = (config: Record<string, unknown> = {}) => ({ name: 'cors', config });
  const corsHeaders = (res: { headers: Headers }) =>
    Object.fromEntries(
      ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers', 'access-control-allow-credentials', 'access-control-max-age', 'vary']
        .map((h) => [h, res.headers.get(h)])
        .filter(([, v]) => v !== null),
    );

  beforeAll(async () => {
    upstream = await startHeaderUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_TRUSTED_IPS: '127.0.0.1' } });
    const [closedPort] = await freePorts(1);
    const example = { origins: ['example.test'], methods: ['GET'], headers: ['origin', 'type', 'accepts'], exposed_headers: ['x-auth-token'] };
    await routeWith('cors1', [cors()]);
    await routeWith('cors2', [cors({ ...example, max_age: 23, credentials: true })]);
    await routeWith('cors3', [cors({ ...example, max_age: 23, preflight_continue: true })]);
    await routeWith('cors4', [cors(), { name: 'key-auth' }]);
    await routeWith('cors5', [cors({ origins: ['*'], credentials: true })]);
    await routeWith('cors6', [cors({ ...example, origins: ['example.test', 'example.org'], max_age: 23, preflight_continue: true })]);
    await routeWith('cors7', [cors({ origins: ['*'], credentials: false })]);
    await routeWith('cors-empty-origins', [cors({ origins: [] })]);
    await routeWith('cors9', [cors({ origins: ['.*\\.?example(?:-foo)?.test'] })]);
    await routeWith('cors10', [cors({ origins: ['http://my-site.test', 'http://my-other-site.test'] })]);
    await routeWith('cors11', [cors({ origins: ['http://my-site.test', 'https://my-other-site.test:9000'] })]);
    await routeWith('cors12', [cors({ credentials: true, max_age: 1728000, origins: ['a.xxx.test', 'allowed-domain.test'] })]);
    await routeWith('cors13', [cors({ private_network: true, origins: ['allowed-domain.test'] })]);
    await routeWith('cors14', [cors({ origins: ['foo.bar', '*'] })]);
    await routeWith('cors-timeout', [cors({ ...example, max_age: 10, preflight_continue: true })], `http://127.0.0.1:${closedPort}/`);
    await routeWith('cors-upstream', [cors({ ...example, max_age: 10, preflight_continue: true })]);
    for (const [i, testcase] of REGEX_CASES.entries()) await routeWith(`cors-regex-${i}`, [cors({ origins: testcase.origins })]);

    const ipv6 = { deny1: { deny: ['::1', '::2'] }, deny2: { deny: ['::2'] }, deny3: { deny: ['fe80::/8'] }, allow4: { allow: ['::2'] }, allow5: { allow: ['::1'] }, all6: { allow: ['::/0'] }, both7: { allow: ['::1'], deny: ['::1'] }, both8: { allow: ['::1/128'], deny: ['::1'] }, both9: { allow: ['::1/128'], deny: ['::1/128'] } };
    for (const [label, config] of Object.entries(ipv6)) await routeWith(`ip6-${label}`, [{ name: 'ip-restriction', config }]);
    await routeWith('size-required', [{ name: 'request-size-limiting', config: { require_content_length: true } }]);
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  describe('cors: HTTP method: OPTIONS', () => {
    const cases = REGEX_CASES.flatMap((testcase, i) => Object.entries(testcase.tests).map(([origin, accept]) => ({ i, origin, accept, origins: JSON.stringify(testcase.origins) })));
    it.each(cases)('given $origin, $origins will accept or reject ($accept)', async ({ i, origin, accept }) => {
      const res = await proxied(url(`/cors-regex-${i}`), { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(200);
      if (accept === false) {
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
        return;
      }
      expect(res.headers.get('access-control-allow-methods')).toBe(CORS_DEFAULT_METHODS);
      expect(res.headers.get('access-control-allow-origin')).toBe(accept === true ? origin : accept);
      for (const h of ['access-control-allow-headers', 'access-control-expose-headers', 'access-control-allow-credentials', 'access-control-max-age']) expect([h, res.headers.get(h)]).toEqual([h, null]);
    });

    it('gives appropriate defaults', async () => {
      const res = await proxied(url('/cors1'), { method: 'OPTIONS', headers: { origin: 'origin1.test', 'access-control-request-method': 'GET' } });
      expect([res.status, res.headers.get('content-length')]).toEqual([200, '0']);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*', 'access-control-allow-methods': CORS_DEFAULT_METHODS });
    });

    it('gives * wildcard when config.origins is empty', async () => {
      const res = await proxied(url('/cors-empty-origins'), { method: 'OPTIONS', headers: { origin: 'empty-origin.test', 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*', 'access-control-allow-methods': CORS_DEFAULT_METHODS });
    });

    it('gives appropriate defaults when origin is explicitly set to * and config.credentials=true', async () => {
      const res = await proxied(url('/cors5'), { method: 'OPTIONS', headers: { origin: 'origin5.test', 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': 'origin5.test', 'access-control-allow-methods': CORS_DEFAULT_METHODS, 'access-control-allow-credentials': 'true', vary: 'Origin' });
    });

    it('gives * wildcard when origin has multiple entries and have * included', async () => {
      const res = await proxied(url('/cors14'), { method: 'OPTIONS', headers: { origin: 'http://www.example.net', 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toBe(CORS_DEFAULT_METHODS);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('accepts config options', async () => {
      const res = await proxied(url('/cors2'), { method: 'OPTIONS', headers: { origin: 'origin5.test', 'access-control-request-method': 'GET' } });
      expect([res.status, res.headers.get('content-length')]).toEqual([200, '0']);
      expect(corsHeaders(res)).toEqual({
        'access-control-allow-methods': 'GET',
        'access-control-allow-origin': 'example.test',
        'access-control-max-age': '23',
        'access-control-allow-credentials': 'true',
        'access-control-allow-headers': 'origin,type,accepts',
        vary: 'Origin',
      });
    });

    it('preflight_continue enabled', async () => {
      // the preflight goes on to the upstream, whose answer gets no CORS header from the plugin
      const res = await proxied(url('/cors3/status/201'), { method: 'OPTIONS', headers: { origin: 'http://example.test', 'access-control-request-method': 'GET', 'x-echo-status': '201' } });
      expect(res.status).toBe(201);
      expect(res.body.method).toBe('OPTIONS');
      expect(corsHeaders(res)).toEqual({});
    });

    it('replies with request-headers if present in request', async () => {
      const res = await proxied(url('/cors5'), { method: 'OPTIONS', headers: { origin: 'origin5.test', 'access-control-request-headers': 'origin,accepts', 'access-control-request-method': 'GET' } });
      expect([res.status, res.headers.get('access-control-allow-headers')]).toEqual([200, 'origin,accepts']);
    });

    it('properly validates flat strings', async () => {
      // not preflights (no Access-Control-Request-Method): proxied, with the CORS headers
      const good = await proxied(url('/cors10'), { method: 'OPTIONS', headers: { origin: 'http://my-site.test' } });
      expect([good.status, good.headers.get('access-control-allow-origin')]).toEqual([200, 'http://my-site.test']);
      for (const origin of ['http://bad-guys.test', 'http://my-site.test.bad-guys.test']) {
        const bad = await proxied(url('/cors10'), { method: 'OPTIONS', headers: { origin } });
        expect([origin, bad.status, bad.headers.get('access-control-allow-origin')]).toEqual([origin, 200, null]);
      }
    });

    it('support private-network', async () => {
      const res = await proxied(url('/cors13'), { method: 'OPTIONS', headers: { origin: 'allowed-domain.test', 'access-control-request-private-network': 'true', 'access-control-request-method': 'PUT' } });
      expect([res.status, res.headers.get('access-control-allow-private-network')]).toEqual([200, 'true']);
    });
  });

  describe('cors: HTTP method: others', () => {
    it('gives appropriate defaults', async () => {
      const res = await proxied(url('/cors1'));
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*' });
    });

    it('proxies a non-preflight OPTIONS request', async () => {
      const res = await proxied(url('/cors1/anything'), { method: 'OPTIONS' });
      expect([res.status, res.body.method]).toEqual([200, 'OPTIONS']);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*' });
    });

    it('accepts config options', async () => {
      const res = await proxied(url('/cors2'));
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': 'example.test', 'access-control-expose-headers': 'x-auth-token', 'access-control-allow-credentials': 'true', vary: 'Origin' });
    });

    it('works even when upstream timeouts', async () => {
      // the gateway's own 502 carries the CORS headers (the upstream refuses the connection)
      const res = await proxied(url('/cors-timeout'));
      expect(res.status).toBe(502);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': 'example.test', 'access-control-expose-headers': 'x-auth-token', vary: 'Origin' });
    });

    it('works with 404 responses', async () => {
      const res = await proxied(url('/cors1/asdasdasd'), { headers: { 'x-echo-status': '404' } });
      expect(res.status).toBe(404);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*' });
    });

    it('works with 40x responses returned by another plugin', async () => {
      const res = await proxied(url('/cors4'));
      expect(res.status).toBe(403);
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*' });
    });

    it('sets CORS orgin based on origin host', async () => {
      const res = await proxied(url('/cors6'), { headers: { origin: 'example.test' } });
      expect([res.status, res.headers.get('access-control-allow-origin'), res.headers.get('vary')]).toEqual([200, 'example.test', 'Origin']);
      const domains: Record<string, boolean> = { 'example.test': true, 'www.example.test': true, 'example-foo.test': true, 'www.example-foo.test': true, 'www.example-fo0.test': false };
      for (const [domain, allowed] of Object.entries(domains)) {
        const each = await proxied(url('/cors9'), { headers: { origin: domain } });
        expect([domain, each.status, each.headers.get('access-control-allow-origin'), each.headers.get('vary')]).toEqual([domain, 200, allowed ? domain : null, 'Origin']);
      }
    });

    it("sets Vary and don't override existing Vary header", async () => {
      const res = await proxied(url('/cors-upstream/response-headers?vary=Accept-Encoding'), { headers: { origin: 'example.test' } });
      expect([res.status, res.headers.get('vary')]).toEqual([200, 'Accept-Encoding, Origin']);
    });

    it('does not automatically parse the host', async () => {
      for (const origin of ['http://example.test', 'https://example.test']) {
        const res = await proxied(url('/cors6'), { headers: { origin } });
        expect([origin, res.status, res.headers.get('access-control-allow-origin')]).toEqual([origin, 200, null]);
      }
    });

    it('validates scheme and port', async () => {
      const expected: Array<[string, string | null]> = [
        ['http://my-site.test', 'http://my-site.test'],
        ['http://my-site.test:80', 'http://my-site.test'],
        ['http://my-site.test:8000', null],
        ['https://my-site.test', null],
        ['https://my-other-site.test:9000', 'https://my-other-site.test:9000'],
        ['https://my-other-site.test:9001', null],
      ];
      for (const [origin, allowed] of expected) {
        const res = await proxied(url('/cors11'), { headers: { origin } });
        expect([origin, res.status, res.headers.get('access-control-allow-origin')]).toEqual([origin, 200, allowed]);
      }
    });

    it('does not sets CORS origin if origin host is not in origin_domains list', async () => {
      const res = await proxied(url('/cors6'), { headers: { origin: 'http://www.example.net' } });
      expect([res.status, res.headers.get('access-control-allow-origin')]).toEqual([200, null]);
    });

    it('responds with the requested Origin when config.credentials=true', async () => {
      const res = await proxied(url('/cors5'), { headers: { origin: 'http://www.example.net' } });
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': 'http://www.example.net', 'access-control-allow-credentials': 'true', vary: 'Origin' });
    });

    it('responds with the requested Origin (including port) when config.credentials=true', async () => {
      const res = await proxied(url('/cors5'), { headers: { origin: 'http://www.example.net:3000' } });
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': 'http://www.example.net:3000', 'access-control-allow-credentials': 'true', vary: 'Origin' });
    });

    it('responds with * when origin is explicitly set to * and config.credentials=false', async () => {
      const res = await proxied(url('/cors7'), { headers: { origin: 'http://www.example.net' } });
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*' });
    });

    it('responds with * when origin has multiple entries and have * included', async () => {
      const res = await proxied(url('/cors14'), { headers: { origin: 'http://www.example.net' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('removes upstream ACAO header when no match is found', async () => {
      const path = '/cors12/response-headers?Response-Header=is-added&Access-Control-Allow-Origin=*';
      const allowed = await proxied(url(path), { headers: { origin: 'allowed-domain.test' } });
      expect([allowed.status, allowed.headers.get('response-header'), allowed.body.headers.origin]).toEqual([200, 'is-added', 'allowed-domain.test']);
      expect(corsHeaders(allowed)).toEqual({ 'access-control-allow-origin': 'allowed-domain.test', 'access-control-allow-credentials': 'true', vary: 'Origin' });
      const refused = await proxied(url(path), { headers: { origin: 'disallowed-domain.test' } });
      expect([refused.status, refused.headers.get('response-header'), refused.body.headers.origin]).toEqual([200, 'is-added', 'disallowed-domain.test']);
      expect(corsHeaders(refused)).toEqual({ 'access-control-allow-credentials': 'true', vary: 'Origin' });
    });
  });

  describe('ip-restriction: IPv6 in X-Real-IP behind a trusted proxy', () => {
    const from = (path: string, ip: string) => proxied(url(path), { headers: { 'x-real-ip': ip } });
    const refusal = (ip: string) => ({ message: `IP address not allowed: ${ip}` });

    it('blocks a request when the IPv6 is denied', async () => {
      const res = await from('/ip6-deny1', '::1');
      expect([res.status, res.body]).toEqual([403, refusal('::1')]);
    });
    it('allows a request when the IPv6 is not denied', async () => {
      const res = await from('/ip6-deny2', '::1');
      expect([res.status, res.body.headers['x-real-ip']]).toEqual([200, '::1']);
    });
    it('blocks the IPv6 with CIDR', async () => {
      expect((await from('/ip6-deny3', 'fe80::1')).status).toBe(403);
    });
    it('blocks an IPv6 on a allowed IPv6 CIDR range', async () => {
      expect((await from('/ip6-both8', '::1')).status).toBe(403);
    });
    it('takes precedence over an allowed IPv6', async () => {
      expect((await from('/ip6-both7', '::1')).status).toBe(403);
    });
    it('takes precedence over an allowed IPv6 CIDR range', async () => {
      expect((await from('/ip6-both9', '::1')).status).toBe(403);
    });
    it('blocks a request when the IPv6 is not allowed', async () => {
      const res = await from('/ip6-allow4', '::1');
      expect([res.status, res.body]).toEqual([403, refusal('::1')]);
    });
    it('allows a allowed IPv6', async () => {
      const res = await from('/ip6-allow5', '::1');
      expect([res.status, res.body.headers['x-real-ip']]).toEqual([200, '::1']);
    });
    it('handles a CIDR entry with ::/0', async () => {
      expect((await from('/ip6-all6', '::1')).status).toBe(200);
    });
    it('X-Forwarded-For, when present, comes before X-Real-IP; an IPv4 X-Real-IP counts too', async () => {
      expect((await proxied(url('/ip6-allow5'), { headers: { 'x-real-ip': '::1', 'x-forwarded-for': '::2' } })).status).toBe(403);
      const v4 = await from('/ip6-deny1', '198.51.100.7');
      expect([v4.status, v4.body.headers['x-real-ip']]).toEqual([200, '198.51.100.7']);
    });
  });

  describe('request-size-limiting: Content-Length header required', () => {
    it('blocks if header is not provided', async () => {
      const res = await proxied(url('/size-required'));
      expect([res.status, res.body]).toEqual([411, { message: 'A valid Content-Length header is required' }]);
    });
    it('lets a chunked body through, counted as it streams', async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('abc'));
          controller.close();
        },
      });
      const res = await proxied(url('/size-required/chunked'), { method: 'POST', body, duplex: 'half' } as RequestInit);
      expect([res.status, res.body.method, upstream.received.get('/chunked')]).toEqual([200, 'POST', 1]);
    });
  });

  describe('decision 32: plugin configs never set hop-by-hop or framing headers', () => {
    it('request-transformer and response-transformer refuse them with 400 naming the field', async () => {
      const refusals: Array<[string, Record<string, unknown>, string]> = [
        ['request-transformer', { add: { headers: ['Transfer-Encoding:chunked'] } }, 'add'],
        ['request-transformer', { append: { headers: ['x-ok:1', 'Connection:close'] } }, 'append'],
        ['request-transformer', { replace: { headers: ['Content-Length:5'] } }, 'replace'],
        ['request-transformer', { rename: { headers: ['x-up:Upgrade'] } }, 'rename'],
        ['response-transformer', { add: { headers: ['Keep-Alive:timeout=5'] } }, 'add'],
        ['response-transformer', { append: { headers: ['Proxy-Authenticate:Basic'] } }, 'append'],
        ['response-transformer', { replace: { headers: ['TE:trailers'] } }, 'replace'],
        ['response-transformer', { rename: { headers: ['x-t:Trailer'] } }, 'rename'],
      ];
      for (const [plugin, config, section] of refusals) {
        const res = await admin('POST', '/plugins', { name: plugin, config });
        expect([plugin, section, res.status, res.body.name]).toEqual([plugin, section, 400, 'schema violation']);
        const messages = JSON.stringify(res.body.fields.config[section].headers);
        expect(messages).toMatch(/is a hop-by-hop or framing header: a plugin may not set it/);
      }
      const transferEncoding = await admin('POST', '/plugins', { name: 'request-transformer', config: { add: { headers: ['Transfer-Encoding:chunked'] } } });
      expect(transferEncoding.body.fields.config.add.headers).toEqual(["'Transfer-Encoding' is a hop-by-hop or framing header: a plugin may not set it"]);
      // nothing was created
      const listed = await admin('GET', '/plugins?size=1000');
      expect(listed.body.data.filter((p: { name: string }) => p.name.endsWith('-transformer'))).toEqual([]);
    });

    it('other plugins that set headers: jwe-decrypt forward_header_name, http-log headers', async () => {
      const jwe = await admin('POST', '/plugins', { name: 'jwe-decrypt', config: { key_sets: ['none'], forward_header_name: 'Content-Length' } });
      expect([jwe.status, jwe.body.fields.config.forward_header_name]).toEqual([400, "'Content-Length' is a hop-by-hop or framing header: a plugin may not set it"]);
      const log = await admin('POST', '/plugins', { name: 'http-log', config: { http_endpoint: 'http://127.0.0.1:9/', headers: { Connection: 'close' } } });
      expect([log.status, log.body.fields.config.headers]).toEqual([400, "'Connection' is a hop-by-hop or framing header: a plugin may not set it"]);
    });
  });
});
