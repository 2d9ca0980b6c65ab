// cors, ip-restriction, request-size-limiting, request-transformer and response-transformer through the real admin
// API and proxy, in both topologies, against the echo upstream. The data planes trust 127.0.0.1 as a proxy
// (GATEHOUSE_TRUSTED_IPS), so X-Forwarded-For chooses the client address ip-restriction sees, as it does for
// rate-limiting.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const TOO_LARGE = { message: 'Request size limit exceeded' };

/** a body sent with Transfer-Encoding: chunked (no Content-Length) */
function chunked(text: string): { body: ReadableStream<Uint8Array>; duplex: 'half' } {
  const bytes = new TextEncoder().encode(text);
  return {
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
    duplex: 'half',
  };
}

describe.each(TOPOLOGIES)('traffic plugins (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  const ids: Record<string, string> = {};

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);

  /** a service and route named `label` at /label, with the given plugins on the route */
  async function routeWith(label: string, plugins: Array<Record<string, unknown>>): Promise<void> {
    await created('/services', { name: label, url: `${upstream.url}/` });
    await created(`/services/${label}/routes`, { name: label, paths: [`/${label}`] });
    for (const plugin of plugins) await created(`/routes/${label}/plugins`, plugin);
  }

  const url = (path: string) => `${topology.proxyUrl}${path}`;
  const reached = (path: string, method?: string) => upstream.received.filter((r) => r.path === path && (method === undefined || r.method === method)).length;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_TRUSTED_IPS: '127.0.0.1' } });

    await routeWith('cors-strict', [
      {
        name: 'cors',
        config: {
          origins: ['http://a.example', 'https://[a-z]+\\.b\\.example'],
          methods: ['GET', 'POST'],
          headers: ['X-One', 'X-Two'],
          exposed_headers: ['X-Exposed'],
          credentials: true,
          max_age: 600,
          private_network: true,
        },
      },
    ]);
    await routeWith('cors-any', [{ name: 'cors' }]);
    await routeWith('cors-continue', [{ name: 'cors', config: { origins: ['*'], preflight_continue: true } }]);
    // preflights are answered before authentication (cors 2000 runs before key-auth 1250)
    await routeWith('cors-auth', [{ name: 'cors', config: { origins: ['http://a.example'] } }, { name: 'key-auth' }]);

    await routeWith('ip-deny', [{ name: 'ip-restriction', config: { deny: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1'] } }]);
    await routeWith('ip-allow', [{ name: 'ip-restriction', config: { allow: ['192.0.2.0/24', '::1'], status: 401, message: 'go away' } }]);
    await routeWith('ip-both', [{ name: 'ip-restriction', config: { allow: ['10.0.0.0/8'], deny: ['10.9.0.0/16'] } }]);

    await routeWith('size-bytes', [{ name: 'request-size-limiting', config: { allowed_payload_size: 10, size_unit: 'bytes' } }]);
    await routeWith('size-kb', [{ name: 'request-size-limiting', config: { allowed_payload_size: 1, size_unit: 'kilobytes' } }]);
    await routeWith('size-cl', [{ name: 'request-size-limiting', config: { require_content_length: true } }]);

    await routeWith('rt', [
      {
        name: 'request-transformer',
        config: {
          remove: { headers: ['x-remove'], querystring: ['drop'], body: ['secret'] },
          rename: { headers: ['x-old:x-new'], querystring: ['q1:q2'], body: ['old:new'] },
          replace: { headers: ['x-rep:replaced', 'x-absent:never'], querystring: ['r:new'], body: ['rep:R', 'absent:never'] },
          add: { headers: ['x-add:added', 'x-rep:not-added'], querystring: ['a:1'], body: ['added:A', 'rep:not-added'] },
          append: { headers: ['x-app:two'], querystring: ['r:extra'], body: ['list:x'] },
        },
      },
    ]);
    // Kong's test26.test: header names go upstream in the case the config spells them
    await routeWith('rt-case', [
      { name: 'request-transformer', config: { rename: { headers: ['x-old-name:X-New-Name'] }, add: { headers: ['x-aDDed2:b1'] }, append: { headers: ['X-aDDed:a2', 'X-aDDed:a3'] } } },
    ]);
    await routeWith('rt-get', [{ name: 'request-transformer', config: { http_method: 'GET' } }]);
    await routeWith('rt-method', [{ name: 'request-transformer', config: { http_method: 'POST', replace: { uri: '/replaced', headers: ['host:upstream.example'] } } }]);

    await routeWith('resp', [
      {
        name: 'response-transformer',
        config: {
          remove: { headers: ['x-echo-upstream'], json: ['headers'] },
          rename: { json: ['url:address'] },
          replace: { headers: ['content-type:application/json; charset=utf-8'], json: ['method:REPLACED', 'absent:never'] },
          add: { headers: ['x-added:yes'], json: ['added:true', 'count:3', 'method:not-added'], json_types: ['boolean', 'number', 'string'] },
          append: { headers: ['x-added:again'], json: ['path:/more', 'missing:one'] },
        },
      },
    ]);
    await routeWith('resp-headers', [{ name: 'response-transformer', config: { add: { headers: ['x-only:headers'] } } }]);

    // Kong's order: cors 2000, key-auth 1250, ip-restriction 990, request-size-limiting 951
    await routeWith('ordered', [
      { name: 'cors', config: { origins: ['http://a.example'] } },
      { name: 'key-auth' },
      { name: 'ip-restriction', config: { deny: ['203.0.113.0/24'] } },
      { name: 'request-size-limiting', config: { allowed_payload_size: 4, size_unit: 'bytes' } },
    ]);

    // consumer scope: ip-restriction may be scoped to a consumer (it runs after authentication), cors may not
    for (const username of ['alice', 'bob']) ids[username] = (await created('/consumers', { username })).id;
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/consumers/bob/key-auth', { key: 'bob-key' });
    await routeWith('scoped', [{ name: 'key-auth' }]);
    await created('/plugins', { name: 'ip-restriction', route: { id: (await admin('GET', '/routes/scoped')).body.id }, consumer: { id: ids.alice }, config: { deny: ['0.0.0.0/0', '::/0'] } });
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  describe('cors', () => {
    it('answers a preflight itself with the configured origin, methods, headers, max age, credentials and private network', async () => {
      const before = reached('/', 'OPTIONS');
      const res = await proxied(url('/cors-strict/x'), {
        method: 'OPTIONS',
        headers: { origin: 'http://a.example', 'access-control-request-method': 'POST', 'access-control-request-private-network': 'true' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toBe('');
      expect(Object.fromEntries(['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age', 'access-control-allow-credentials', 'access-control-allow-private-network', 'vary'].map((h) => [h, res.headers.get(h)]))).toEqual({
        'access-control-allow-origin': 'http://a.example',
        'access-control-allow-methods': 'GET,POST',
        'access-control-allow-headers': 'X-One,X-Two',
        'access-control-max-age': '600',
        'access-control-allow-credentials': 'true',
        'access-control-allow-private-network': 'true',
        vary: 'Origin',
      });
      expect(reached('/x', 'OPTIONS') + reached('/', 'OPTIONS') - before).toBe(0);
    });

    it('a regex origin matches the whole Origin; actual requests get the origin, credentials and exposed headers', async () => {
      const res = await proxied(url('/cors-strict/y'), { headers: { origin: 'https://api.b.example' } });
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/y');
      expect(res.headers.get('access-control-allow-origin')).toBe('https://api.b.example');
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      expect(res.headers.get('access-control-expose-headers')).toBe('X-Exposed');
      expect(res.headers.get('access-control-allow-methods')).toBeNull();
      // anchored at both ends: a longer origin does not match
      const longer = await proxied(url('/cors-strict/y'), { headers: { origin: 'https://api.b.example.evil.test' } });
      expect(longer.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('an origin not listed gets no Access-Control-Allow-Origin (the request still reaches the upstream)', async () => {
      const res = await proxied(url('/cors-strict/z'), { headers: { origin: 'http://evil.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('vary')).toBe('Origin');
    });

    it('defaults: every origin (`*`), Kong\'s nine methods, the requested headers echoed', async () => {
      const res = await proxied(url('/cors-any'), {
        method: 'OPTIONS',
        headers: { origin: 'http://anywhere.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'X-Custom' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toBe('GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT');
      expect(res.headers.get('access-control-allow-headers')).toBe('X-Custom');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-max-age')).toBeNull();
      const simple = await proxied(url('/cors-any'), { headers: { origin: 'http://anywhere.example' } });
      expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('preflight_continue sends the preflight on to the upstream, whose answer gets no CORS header (as Kong)', async () => {
      const res = await proxied(url('/cors-continue/pf'), { method: 'OPTIONS', headers: { origin: 'http://a.example', 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(200);
      expect(res.body.method).toBe('OPTIONS');
      expect(res.headers.get('x-echo-upstream')).toBe('true');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      // an actual request still gets them
      expect((await proxied(url('/cors-continue/pf'), { headers: { origin: 'http://a.example' } })).headers.get('access-control-allow-origin')).toBe('*');
    });

    it('a preflight is answered before key-auth asks for a key; the actual request still needs one', async () => {
      const preflight = await proxied(url('/cors-auth'), { method: 'OPTIONS', headers: { origin: 'http://a.example', 'access-control-request-method': 'GET' } });
      expect(preflight.status).toBe(200);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://a.example');
      const refused = await proxied(url('/cors-auth'), { headers: { origin: 'http://a.example' } });
      expect(refused.status).toBe(403);
      // the refusal carries the CORS headers, so the browser can read it
      expect(refused.headers.get('access-control-allow-origin')).toBe('http://a.example');
    });

    it('cannot be scoped to a consumer; bad regexes are refused', async () => {
      const scoped = await admin('POST', '/plugins', { name: 'cors', consumer: { id: ids.alice } });
      expect(scoped.status).toBe(400);
      expect(scoped.body.fields.consumer).toBe('value must be null');
      const bad = await admin('POST', '/plugins', { name: 'cors', config: { origins: ['(unclosed'] } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body.fields.config)).toContain('is not a valid regex');
    });
  });

  describe('ip-restriction', () => {
    it('deny: addresses and CIDR blocks of both families get 403 "IP address not allowed: <ip>"; others pass', async () => {
      for (const ip of ['10.1.2.3', '2001:db8::5', '192.0.2.1']) {
        const res = await proxied(url('/ip-deny'), { headers: { 'x-forwarded-for': ip } });
        expect([ip, res.status, res.body]).toEqual([ip, 403, { message: `IP address not allowed: ${ip}` }]);
      }
      for (const ip of ['11.0.0.1', '2001:db9::1', '192.0.2.2']) {
        const res = await proxied(url('/ip-deny'), { headers: { 'x-forwarded-for': ip } });
        expect([ip, res.status]).toEqual([ip, 200]);
      }
    });

    it('allow: only listed addresses pass; `status` and `message` choose the refusal', async () => {
      expect((await proxied(url('/ip-allow'), { headers: { 'x-forwarded-for': '192.0.2.200' } })).status).toBe(200);
      expect((await proxied(url('/ip-allow'), { headers: { 'x-forwarded-for': '::1' } })).status).toBe(200);
      const refused = await proxied(url('/ip-allow'), { headers: { 'x-forwarded-for': '198.51.100.1' } });
      expect([refused.status, refused.body]).toEqual([401, { message: 'go away' }]);
    });

    it('deny wins over allow; without a trusted proxy the socket address counts', async () => {
      expect((await proxied(url('/ip-both'), { headers: { 'x-forwarded-for': '10.1.0.1' } })).status).toBe(200);
      expect((await proxied(url('/ip-both'), { headers: { 'x-forwarded-for': '10.9.0.1' } })).status).toBe(403);
      // no X-Forwarded-For: the client is 127.0.0.1, not in the allow list
      expect((await proxied(url('/ip-both'))).status).toBe(403);
    });

    it('scoped to a consumer: that consumer is refused, others pass', async () => {
      expect((await proxied(url('/scoped'), { headers: { apikey: 'alice-key' } })).status).toBe(403);
      expect((await proxied(url('/scoped'), { headers: { apikey: 'bob-key' } })).status).toBe(200);
    });

    it('refuses a config with neither list, and entries that are not addresses', async () => {
      const empty = await admin('POST', '/plugins', { name: 'ip-restriction' });
      expect(empty.status).toBe(400);
      expect(empty.body.fields['@entity']).toEqual(["at least one of these fields must be non-empty: 'config.allow', 'config.deny'"]);
      const bad = await admin('POST', '/plugins', { name: 'ip-restriction', config: { allow: ['10.0.0.0/33'] } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body.fields.config)).toContain('invalid ip or cidr range');
    });
  });

  describe('request-size-limiting', () => {
    it('Content-Length past the limit: 413 with Kong\'s message, the upstream never reached; at the limit: passes', async () => {
      const before = reached('/big');
      const refused = await proxied(url('/size-bytes/big'), { method: 'POST', body: '12345678901' });
      expect([refused.status, refused.body]).toEqual([413, TOO_LARGE]);
      expect(reached('/big')).toBe(before);
      const ok = await proxied(url('/size-bytes/ok'), { method: 'POST', body: '1234567890' });
      expect(ok.status).toBe(200);
      expect(ok.body.body).toBe('1234567890');
    });

    it('chunked bodies are counted as they stream: past the limit 413, within it forwarded whole', async () => {
      const refused = await proxied(url('/size-bytes/chunked-big'), { method: 'POST', ...chunked('x'.repeat(50)) } as RequestInit);
      expect([refused.status, refused.body]).toEqual([413, TOO_LARGE]);
      const ok = await proxied(url('/size-bytes/chunked-ok'), { method: 'POST', ...chunked('abcde') } as RequestInit);
      expect(ok.status).toBe(200);
      expect(ok.body.body).toBe('abcde');
    });

    it('size_unit kilobytes: 1024 bytes pass, 1025 do not', async () => {
      expect((await proxied(url('/size-kb'), { method: 'POST', body: 'x'.repeat(1024) })).status).toBe(200);
      expect((await proxied(url('/size-kb'), { method: 'POST', body: 'x'.repeat(1025) })).status).toBe(413);
    });

    it('require_content_length: a request with neither Content-Length nor a chunked body gets 411; a chunked one passes', async () => {
      const res = await proxied(url('/size-cl'));
      expect([res.status, res.body]).toEqual([411, { message: 'A valid Content-Length header is required' }]);
      expect((await proxied(url('/size-cl'), { method: 'POST', body: 'abc' })).status).toBe(200);
      const streamed = await proxied(url('/size-cl'), { method: 'POST', ...chunked('abc') } as RequestInit);
      expect([streamed.status, streamed.body.body]).toEqual([200, 'abc']);
    });
  });

  describe('request-transformer', () => {
    const headers = { 'x-remove': 'gone', 'x-old': 'moved', 'x-rep': 'original', 'x-app': 'one' };

    it('headers and query string: remove, rename, replace, add, append in Kong\'s order', async () => {
      const res = await proxied(url('/rt/h?drop=1&q1=v1&r=old&keep=k'), { headers });
      expect(res.status).toBe(200);
      const seen = res.body.headers;
      expect(seen['x-remove']).toBeUndefined();
      expect(seen['x-old']).toBeUndefined();
      expect(seen['x-new']).toBe('moved');
      expect(seen['x-rep']).toBe('replaced');
      expect(seen['x-absent']).toBeUndefined();
      expect(seen['x-add']).toBe('added');
      expect(seen['x-app']).toBe('one, two');
      expect(res.body.query).toEqual({ q2: 'v1', r: ['new', 'extra'], keep: 'k', a: '1' });
    });

    it('JSON body: remove, rename, replace, add, append', async () => {
      const res = await proxied(url('/rt/j'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secret: 's', old: 'o', rep: 'r', list: 'l', other: 1 }),
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.body)).toEqual({ new: 'o', rep: 'R', list: ['l', 'x'], other: 1, added: 'A' });
      expect(res.body.headers['content-length']).toBe(String(Buffer.byteLength(res.body.body)));
    });

    it('form body: the same operations on urlencoded fields', async () => {
      const res = await proxied(url('/rt/f'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'secret=s&old=o&rep=r&list=l',
      });
      expect(res.status).toBe(200);
      expect(Object.fromEntries([...new URLSearchParams(res.body.body)].map(([k]) => [k, new URLSearchParams(res.body.body).getAll(k)]))).toEqual({
        new: ['o'],
        rep: ['R'],
        list: ['l', 'x'],
        added: ['A'],
      });
    });

    it('multipart body: rename, remove, replace and add as Kong does (append does not apply to multipart)', async () => {
      const boundary = 'gatehouse-e2e-boundary';
      const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      const body = `${part('secret', 's')}${part('old', 'o')}${part('rep', 'r')}${part('list', 'l')}--${boundary}--\r\n`;
      const res = await proxied(url('/rt/m'), { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
      expect(res.status).toBe(200);
      expect(res.body.body).toBe(`${part('list', 'l')}${part('new', 'o')}${part('rep', 'R')}${part('added', 'A')}--${boundary}--\r\n`);
      expect(res.body.headers['content-length']).toBe(String(Buffer.byteLength(res.body.body)));
    });

    it('other bodies stream through untouched', async () => {
      const res = await proxied(url('/rt/t'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'secret=s' });
      expect(res.body.body).toBe('secret=s');
    });

    describe('header names keep the configured case', () => {
      /** the header lines the upstream received for the last request to `path`, names as sent */
      const rawLines = (path: string) => {
        const raw = upstream.received.filter((r) => r.path === path).at(-1)!.rawHeaders!;
        const lines: Array<[string, string]> = [];
        for (let i = 0; i < raw.length; i += 2) lines.push([raw[i]!, raw[i + 1]!]);
        return lines;
      };
      const named = (path: string, name: string) => rawLines(path).filter(([n]) => n.toLowerCase() === name.toLowerCase());

      it('add new header if missing -- keep configured case', async () => {
        expect((await proxied(url('/rt-case/add'))).status).toBe(200);
        expect(named('/add', 'x-added2')).toEqual([['x-aDDed2', 'b1']]);
      });

      it('does not add new header if it already exist -- keep request case', async () => {
        expect((await proxied(url('/rt-case/kept'), { headers: { 'x-added2': 'c1' } })).status).toBe(200);
        expect(named('/kept', 'x-added2')).toEqual([['x-added2', 'c1']]);
      });

      it('appends values to existing headers -- keep config case', async () => {
        expect((await proxied(url('/rt-case/append'), { headers: { 'X-addeD': 'a0' } })).status).toBe(200);
        expect(named('/append', 'x-added')).toEqual([['X-aDDed', 'a0'], ['X-aDDed', 'a2'], ['X-aDDed', 'a3']]);
      });

      it('rename: the new name as configured', async () => {
        expect((await proxied(url('/rt-case/rename'), { headers: { 'x-old-name': 'v' } })).status).toBe(200);
        expect(named('/rename', 'x-new-name')).toEqual([['X-New-Name', 'v']]);
        expect(named('/rename', 'x-old-name')).toEqual([]);
      });
    });

    it('http_method GET: a form body moves into the query string', async () => {
      const res = await proxied(url('/rt-get/g?a=1&keep=k'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=2&b=3' });
      expect(res.status).toBe(200);
      expect(res.body.method).toBe('GET');
      expect(res.body.query).toEqual({ a: '2', keep: 'k', b: '3' });
    });

    it('http_method, replace.uri and the Host header', async () => {
      const res = await proxied(url('/rt-method/anything?x=1'));
      expect(res.status).toBe(200);
      expect(res.body.method).toBe('POST');
      expect(res.body.url).toBe('/replaced?x=1');
      // replace.headers of `host` chooses the Host the upstream sees
      expect(res.body.headers.host).toBe('upstream.example');
    });
  });

  describe('response-transformer', () => {
    it('headers and JSON body: remove, rename, replace, add (with json_types), append', async () => {
      const res = await proxied(url('/resp/p?k=v'));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-echo-upstream')).toBeNull();
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('x-added')).toBe('yes, again');
      const body = res.body;
      expect(body.headers).toBeUndefined();
      expect(body.url).toBeUndefined();
      expect(body.address).toBe('/p?k=v');
      expect(body.method).toBe('REPLACED');
      expect(body.absent).toBeUndefined();
      expect(body.added).toBe(true);
      expect(body.count).toBe(3);
      expect(body.path).toEqual(['/p', '/more']);
      expect(body.query).toEqual({ k: 'v' });
    });

    it('append: new key:value if key does not exists (a one-element array)', async () => {
      const res = await proxied(url('/resp/p'));
      expect(res.status).toBe(200);
      expect(res.body.missing).toEqual(['one']);
    });

    it('header operations alone leave the body streaming as the upstream sent it', async () => {
      const res = await proxied(url('/resp-headers/q'));
      expect(res.headers.get('x-only')).toBe('headers');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(JSON.stringify(res.body))));
      expect(res.body.path).toBe('/q');
    });
  });

  it("plugins run in Kong's priority order with authentication: cors, key-auth, ip-restriction, request-size-limiting", async () => {
    const denied = { 'x-forwarded-for': '203.0.113.5' };
    // a preflight from a denied address is answered by cors before anything else runs
    const preflight = await proxied(url('/ordered'), { method: 'OPTIONS', headers: { ...denied, origin: 'http://a.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(200);
    // no key: key-auth answers before ip-restriction and the size limit
    const noKey = await proxied(url('/ordered'), { method: 'POST', headers: denied, body: 'too large' });
    expect([noKey.status, noKey.body]).toEqual([403, { message: 'No API key found in headers or querystring' }]);
    // a key from a denied address: ip-restriction before the size limit
    const deniedWithKey = await proxied(url('/ordered'), { method: 'POST', headers: { ...denied, apikey: 'bob-key' }, body: 'too large' });
    expect([deniedWithKey.status, deniedWithKey.body]).toEqual([403, { message: 'IP address not allowed: 203.0.113.5' }]);
    const big = await proxied(url('/ordered'), { method: 'POST', headers: { apikey: 'bob-key' }, body: 'too large' });
    expect([big.status, big.body]).toEqual([413, TOO_LARGE]);
    const ok = await proxied(url('/ordered'), { method: 'POST', headers: { apikey: 'bob-key', origin: 'http://a.example' }, body: 'ok' });
    expect([ok.status, ok.body.headers['x-consumer-username'], ok.headers.get('access-control-allow-origin')]).toEqual([200, 'bob', 'http://a.example']);
  });

  it('Kong Manager forms: /schemas/plugins/{name} describes each plugin', async () => {
    for (const plugin of ['cors', 'ip-restriction', 'request-size-limiting', 'request-transformer', 'response-transformer']) {
      const res = await admin('GET', `/schemas/plugins/${plugin}`);
      expect([plugin, res.status]).toEqual([plugin, 200]);
      expect(Array.isArray(res.body.fields)).toBe(true);
    }
  });
});
