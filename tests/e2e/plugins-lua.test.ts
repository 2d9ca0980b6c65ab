// Lua in plugin configs, through the real admin API and proxy in both topologies: pre-function and post-function
// (Kong's spec/03-plugins/33-serverless-functions/{01-schema,02-access}_spec.lua `it` names), request-transformer
// templates (36-request-transformer/02-access_spec.lua, "request rewrite using template" and the sandbox cases) and
// custom_fields_by_lua in file-log and http-log. Kong routes by host; these routes are paths (`/pre-function-one`
// for Kong's `one.pre-function.test`), regex routes keep their path upstream (strip_path off).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const FN = {
  one: 'ngx.status = 503\nngx.exit(ngx.status)',
  two: 'ngx.status = 404\nngx.say("Not Found")\nngx.exit(ngx.status)',
  three: 'return kong.response.exit(406, { message = "Invalid" })',
  four: 'ngx.status = 400',
  five: 'ngx.exit(ngx.status)',
  six: 'local count = 0\nreturn function()\n  count = count + 1\n  ngx.status = 200\n  ngx.say(ngx.worker.pid() * 1000 + count)\n  ngx.exit(ngx.status)\nend',
  seven: 'ngx.req.read_body()\nlocal count = tonumber(ngx.req.get_body_data())\ncount = count + 1\nngx.status = 200\nngx.say(count)\nngx.exit(ngx.status)',
  nine: 'error("this should stop the request with a 500")',
  ten: 'ngx.var.args = nil',
};
const FN_EIGHT = `return function() \n${FN.seven}\n end`;
const CAPTURES = '/requests/user1/(?<user1>\\w+)/user2/(?<user2>\\S+)';
const SERVERLESS = ['pre-function', 'post-function'] as const;

interface EchoUpstream {
  url: string;
  close(): Promise<void>;
}

/** An upstream answering the JSON of the request it got: {method, path, query, headers}. */
async function startEchoUpstream(): Promise<EchoUpstream> {
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', 'http://upstream');
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, path: target.pathname, query: target.search, headers: req.headers, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An HTTP log receiver: every entry http-log sent (a batch is an array). */
async function startReceiver(): Promise<{ url: string; entries: Array<Record<string, unknown>>; server: Server }> {
  const entries: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown> | Array<Record<string, unknown>>;
      entries.push(...(Array.isArray(body) ? body : [body]));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/log`, entries, server };
}

/** A GET sending `headers` as separate lines (fetch would join a repeated header into one); the echoed headers. */
function getWithRawHeaders(target: string, headers: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const req = request(target, { headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        try {
          resolve((JSON.parse(text) as { headers: Record<string, string> }).headers);
        } catch {
          reject(new Error(`${res.statusCode ?? 0}: ${text}`));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function until<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(TOPOLOGIES)('Lua in plugin configs (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let dir: string;

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
  const url = (path: string) => `${topology.proxyUrl}${path}`;
  const output = () => topology.dataPlanes[0]!.process.output();

  async function routeWith(label: string, plugins: Array<Record<string, unknown>>, paths = [`/${label}`]): Promise<void> {
    await created('/services', { name: label, url: upstream.url });
    await created(`/services/${label}/routes`, { name: label, paths, strip_path: false });
    for (const plugin of plugins) await created(`/routes/${label}/plugins`, plugin);
  }
  const transformer = (config: Record<string, unknown>) => ({ name: 'request-transformer', config });

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-lua-${name}-`));
    topology = await startTopology(name);
    for (const plugin of SERVERLESS) {
      const fn = (label: string, access: string[]) => routeWith(`${plugin}-${label}`, [{ name: plugin, config: { access } }]);
      await fn('one', [FN.one]);
      await fn('two', [FN.two]);
      await fn('three', [FN.three]);
      await fn('four', [FN.four, FN.five]);
      await fn('six', [FN.six]);
      await fn('seven', [FN.seven]);
      await fn('eight', [FN_EIGHT]);
      await fn('nine', [FN.nine]);
      await fn('ten', [FN.ten]);
    }
    await routeWith('unsupported', [{ name: 'pre-function', config: { access: ['local v = kong.cache:get("foo")'] } }]);
    await routeWith('forever', [{ name: 'pre-function', config: { access: ['while true do end'] } }]);
    await routeWith('phases', [
      {
        name: 'pre-function',
        config: {
          rewrite: ['kong.service.request.set_header("x-rewrite", "ran")'],
          access: [
            'kong.service.request.set_header("x-access", kong.request.get_header("x-in") .. "/" .. kong.request.get_method())',
            'kong.service.request.set_header("x-shared", kong.ctx.shared.rewritten or "none")',
          ],
          header_filter: ['kong.response.set_header("x-header-filter", tostring(kong.response.get_status()))'],
          body_filter: ['kong.response.set_raw_body(kong.response.get_raw_body() .. "!")'],
          log: ['kong.log.err("log phase ran for ", kong.request.get_path())'],
        },
      },
    ]);
    const pdk = [
      'local m = ngx.re.match(kong.request.get_path(), [[/pdk/(?P<id>\\d+)]])',
      'local from, to = ngx.re.find("abc42", "[0-9]+")',
      'kong.service.request.set_header("x-pdk", table.concat({ kong.request.get_method(), kong.request.get_path(), kong.request.get_query_arg("q"), kong.request.get_scheme(), kong.client.get_ip(), ngx.var.arg_q, ngx.var.uri, m.id, from .. "-" .. to, tostring(type(ngx.time())) }, "|"))',
      'kong.service.request.set_path("/rewritten")',
      'kong.service.request.set_query({ a = "1" })',
      'kong.response.set_header("x-from-access", "yes")',
    ].join('\n');
    await routeWith('pdk', [{ name: 'pre-function', config: { access: [pdk] } }]);
    await routeWith('order', [
      { name: 'post-function', config: { access: ['kong.service.request.set_header("x-order", (kong.ctx.shared.order or "") .. "post")'] } },
      { name: 'pre-function', config: { access: ['kong.ctx.shared.order = "pre,"'] } },
    ]);

    await routeWith('t10', [transformer({ add: { querystring: ['uri_param1:$(uri_captures.user1)', 'uri_param2[some_index][1]:$(uri_captures.user2)'] } })], [`~/t10${CAPTURES}`]);
    await routeWith('t11', [transformer({ replace: { uri: '/requests/user2/$(uri_captures.user2)/user1/$(uri_captures.user1)' } })], [`~/t11${CAPTURES}`]);
    await routeWith('t12', [transformer({ add: { querystring: ["uri_param1:$(uri_captures.user1 or 'default1')", "uri_param2:$(uri_captures.user2 or 'default2')"] } })], ['/t12/requests/']);
    await routeWith('t13', [transformer({ replace: { uri: '/requests/user2/$(10 * uri_captures.user1)' } })], [`~/t13${CAPTURES}`]);
    await routeWith('t14', [transformer({ replace: { uri: '/requests$(uri_captures[0])' } })], ['~/t14/user1/(?<user1>\\w+)/user2/(?<user2>\\S+)']);
    await routeWith('t15', [transformer({ remove: { querystring: ['q1'] }, add: { querystring: ['uri_param1:$(uri_captures.user1)', 'uri_param2:$(headers.host)'], headers: ['x-test-header:$(query_params.q1)'] } })], [`~/t15${CAPTURES}`]);
    await routeWith('t16', [transformer({ remove: { headers: ['x-remove-header'] }, replace: { querystring: ["q2:$(headers['x-remove-header'])"] }, add: { querystring: ['q1:$(uri_captures.user1)'], headers: ["x-test-header:$(headers['x-remove-header'])"] } })], [`~/t16${CAPTURES}`]);
    await routeWith('t17', [transformer({ replace: { querystring: ["q2:$(headers['x-replace-header'])"], headers: ['x-replace-header:the new value'] }, add: { querystring: ['q1:$(uri_captures.user1)'], headers: ["x-test-header:$(headers['x-replace-header'])"] } })], [`~/t17${CAPTURES}`]);
    await routeWith('t18', [transformer({ add: { querystring: ["q1:$('$(uri_captures.user1)')"] } })], [`~/t18${CAPTURES}`]);
    await routeWith('t19', [transformer({ add: { querystring: ['q1:$(ERROR())'] } })], [`~/t19${CAPTURES}`]);
    await routeWith('t21', [{ name: 'pre-function', config: { access: ['kong.ctx.shared.my_version = "1.2.3"'] } }, transformer({ add: { querystring: ['shared_param1:$(shared.my_version)'] } })]);
    await routeWith('t24', [transformer({ add: { headers: ['x-user-agent:$(foo(headers["User-Agent"]) == "table" and headers["User-Agent"][1] or headers["User-Agent"])'] } })]);
    await routeWith('t25', [transformer({ add: { headers: ['X-Foo-Transformed:$(type(headers["X-Foo"]) == "table" and headers["X-Foo"][1] .. "-first" or headers["X-Foo"])'] } })]);
    await routeWith('t28', [transformer({ add: { headers: ['X-Write-Attempt:$(shared.written = true)'] } })]);
    await routeWith('sandbox1', [transformer({ add: { headers: ['x-added:$(type(query_params.user))'] } })]);
    await routeWith('sandbox2', [transformer({ add: { headers: ['x-added:$(string.sub(query_params.user, 1, 3))'] } })]);
    await routeWith('sandbox3', [transformer({ add: { headers: ["x-added:$(require('inspect')('somestring'))"] } })]);

    const custom = { team: 'return kong.request.get_header("x-team")', 'request.flag': 'return "on"', client_ip: 'return nil', status_seen: 'return kong.response.get_status()' };
    await routeWith('logged', [
      { name: 'file-log', config: { path: join(dir, 'file.log'), custom_fields_by_lua: custom } },
      { name: 'http-log', config: { http_endpoint: receiver.url, custom_fields_by_lua: custom } },
    ]);
    // Kong runs the rewrite handlers of global configurations only (before the route's plugins, whatever pre-function
    // the route has of its own): this snippet runs on every request of the file, and acts on /phases alone
    await created('/plugins', {
      name: 'pre-function',
      config: { rewrite: ['if kong.request.get_path() == "/phases" then\n  kong.service.request.set_header("x-global-rewrite", "ran")\n  kong.ctx.shared.rewritten = "yes"\nend'] },
    });
    await topology.converge();
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.server.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe.each(SERVERLESS)('Plugin: %s (by config) schema', (plugin) => {
    it('validates single function', async () => {
      const res = await admin('POST', '/schemas/plugins/validate', { name: plugin, config: { access: [FN.one] } });
      expect(res.status).toBe(200);
    });

    it('error in function is not triggered during validation', async () => {
      expect((await admin('POST', '/schemas/plugins/validate', { name: plugin, config: { access: ['error("should never run")'] } })).status).toBe(200);
    });

    it('with an invalid function', async () => {
      const res = await admin('POST', '/plugins', { name: plugin, config: { access: ['print('] } });
      expect(res.status).toBe(400);
      expect(res.body.fields.config.access[0]).toBe(`error parsing ${plugin}: [string "print("]:1: unexpected symbol near '<eof>'`);
    });

    it('with a valid and invalid function', async () => {
      const res = await admin('POST', '/plugins', { name: plugin, config: { header_filter: [FN.one, 'print('] } });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.fields.config.header_filter)).toContain(`error parsing ${plugin}: [string \\"print(\\"]:1: unexpected symbol near '<eof>'`);
    });

    it('refuses a configuration without any phase', async () => {
      const res = await admin('POST', '/plugins', { name: plugin, config: {} });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.fields)).toContain("at least one of these fields must be non-empty: 'config.certificate', 'config.rewrite', 'config.access', 'config.header_filter', 'config.body_filter', 'config.log'");
    });
  });

  it('priority of plugins', async () => {
    const res = await admin('GET', '/');
    expect(res.body.plugins.available_on_server['pre-function'].priority).toBe(1000000);
    expect(res.body.plugins.available_on_server['post-function'].priority).toBe(-1000);
  });

  describe.each(SERVERLESS)('Plugin: %s (by config) access', (plugin) => {
    const at = (label: string) => url(`/${plugin}-${label}`);

    it('using ngx.exit()', async () => {
      expect((await proxied(at('one'))).status).toBe(503);
    });

    it('with upvalues', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 10; i++) {
        const res = await proxied(at('six'));
        expect(res.status).toBe(200);
        expect(seen.has(String(res.body))).toBe(false);
        seen.add(String(res.body));
      }
    });

    it('using ngx.status and exit', async () => {
      const res = await proxied(at('two'));
      expect(res.status).toBe(404);
      expect(String(res.body).trim()).toBe('Not Found');
    });

    it('import response utility and send message', async () => {
      const res = await proxied(at('three'));
      expect(res.status).toBe(406);
      expect(res.body.message).toMatch('Invalid');
    });

    it('cascading functions for a 400 and exit', async () => {
      const res = await proxied(at('four'));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch('Bad request');
    });

    it('runtime error aborts with a 500', async () => {
      const res = await proxied(at('nine'));
      expect(res.status).toBe(500);
      expect(res.body.message).toMatch('An unexpected error occurred');
    });

    it('once on initialization', async () => {
      const res = await proxied(at('seven'), { method: 'POST', body: '0' });
      expect(Number(res.body)).toBe(1);
    });

    it('on repeated calls', async () => {
      let count = 0;
      for (let i = 0; i < 10; i++) count = Number((await proxied(at('seven'), { method: 'POST', body: String(count) })).body);
      expect(count).toBe(10);
    });

    it('once on initialization, with upvalues', async () => {
      expect(Number((await proxied(at('eight'), { method: 'POST', body: '0' })).body)).toBe(1);
    });

    it('on repeated calls, with upvalues', async () => {
      let count = 0;
      for (let i = 0; i < 10; i++) count = Number((await proxied(at('eight'), { method: 'POST', body: String(count) })).body);
      expect(count).toBe(10);
    });

    it('does not crash even when query is cleared, #9246', async () => {
      const res = await proxied(`${at('ten')}?a=b`);
      expect(res.status).toBe(200);
      expect(res.body.query).toBe('');
    });
  });

  describe('sandbox and PDK subset', () => {
    it('a snippet calling an unsupported function answers 500 and logs its name', async () => {
      const from = output().length;
      const res = await proxied(url('/unsupported'));
      expect(res.status).toBe(500);
      await topology.dataPlanes[0]!.process.waitForOutput('unsupported function: kong.cache', 10_000, from);
    });

    it('a snippet that never ends answers 500, logs the budget, and the next request is served', async () => {
      const from = output().length;
      expect((await proxied(url('/forever'))).status).toBe(500);
      await topology.dataPlanes[0]!.process.waitForOutput(/budget exceeded/, 10_000, from);
      expect((await proxied(url('/pre-function-three'))).status).toBe(406);
    });

    it("runs the global configuration's rewrite snippets (never a route's) before access, then header_filter, body_filter and log", async () => {
      const from = output().length;
      const res = await proxied(url('/phases'), { headers: { 'x-in': 'hello' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-header-filter')).toBe('200');
      expect(typeof res.body).toBe('string');
      const text = String(res.body);
      expect(text.endsWith('!')).toBe(true);
      const echoed = JSON.parse(text.slice(0, -1)) as { headers: Record<string, string> };
      expect([echoed.headers['x-global-rewrite'], echoed.headers['x-shared'], echoed.headers['x-access']]).toEqual(['ran', 'yes', 'hello/GET']);
      // the route's own pre-function has a rewrite snippet too: Kong never runs it, nor does Gatehouse
      expect(echoed.headers['x-rewrite']).toBeUndefined();
      await topology.dataPlanes[0]!.process.waitForOutput('log phase ran for /phases', 10_000, from);
    });

    it('reads the request and changes what goes upstream through the PDK subset', async () => {
      const res = await proxied(url('/pdk/42?q=v'));
      expect(res.status).toBe(200);
      expect(res.body.headers['x-pdk']).toBe('GET|/pdk/42|v|http|127.0.0.1|v|/pdk/42|42|4-5|number');
      expect([res.body.path, res.body.query]).toEqual(['/rewritten', '?a=1']);
      expect(res.headers.get('x-from-access')).toBe('yes');
    });

    it('pre-function runs first and post-function last, sharing kong.ctx.shared', async () => {
      expect((await proxied(url('/order'))).body.headers['x-order']).toBe('pre,post');
    });
  });

  describe('Plugin: request-transformer(access) request rewrite using template', () => {
    it('template as querystring parameters on GET', async () => {
      const res = await proxied(url('/t10/requests/user1/foo/user2/bar?q1=20'));
      expect(res.status).toBe(200);
      expect(res.body.query).toBe('?q1=20&uri_param1=foo&uri_param2%5Bsome_index%5D%5B1%5D=bar');
    });

    it('should update request path using hash', async () => {
      const res = await proxied(url('/t11/requests/user1/foo/user2/bar'));
      expect(res.body.path).toBe('/requests/user2/bar/user1/foo');
    });

    it('should not add querystring if hash missing', async () => {
      const res = await proxied(url('/t12/requests/?q1=20'));
      const query = new URLSearchParams(res.body.query);
      expect([query.get('q1'), query.get('uri_param1'), query.get('uri_param2')]).toEqual(['20', 'default1', 'default2']);
    });

    it('should fail when uri template is not a proper expression', async () => {
      expect((await proxied(url('/t13/requests/user1/foo/user2/bar'))).status).toBe(500);
    });

    it('should not fail when uri template rendered using index', async () => {
      const res = await proxied(url('/t14/user1/foo/user2/bar'));
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/requests/t14/user1/foo/user2/bar');
    });

    it('validate using headers/req_querystring for rendering templates', async () => {
      const res = await proxied(url('/t15/requests/user1/foo/user2/bar?q1=20'));
      const query = new URLSearchParams(res.body.query);
      expect([query.has('q1'), query.get('uri_param1'), query.get('uri_param2')]).toEqual([false, 'foo', new URL(topology.proxyUrl).host]);
      expect(res.body.headers['x-test-header']).toBe('20');
    });

    it('validate that removed header can be used as template', async () => {
      const res = await proxied(url('/t16/requests/user1/foo/user2/bar?q2=20'), { headers: { 'x-remove-header': 'its a test' } });
      const query = new URLSearchParams(res.body.query);
      expect(res.body.headers['x-remove-header']).toBeUndefined();
      expect([query.get('q1'), query.get('q2'), res.body.headers['x-test-header']]).toEqual(['foo', 'its a test', 'its a test']);
    });

    it('validate template will be rendered with old value of replaced header', async () => {
      const res = await proxied(url('/t17/requests/user1/foo/user2/bar?q2=20'), { headers: { 'x-replace-header': 'the old value' } });
      const query = new URLSearchParams(res.body.query);
      expect([query.get('q1'), query.get('q2'), res.body.headers['x-test-header'], res.body.headers['x-replace-header']]).toEqual(['foo', 'the old value', 'the old value', 'the new value']);
    });

    it('validate template can be escaped', async () => {
      const res = await proxied(url('/t18/requests/user1/foo/user2/bar?q2=20'));
      const query = new URLSearchParams(res.body.query);
      expect([query.get('q1'), query.get('q2')]).toEqual(['$(uri_captures.user1)', '20']);
    });

    it('rendering error (query) should fail when rendering errors out', async () => {
      expect((await proxied(url('/t19/requests/user1/foo/user2/bar?q2=20'))).status).toBe(500);
    });

    it('rendering error (header) is correctly propagated in error.log, issue #25', async () => {
      const from = output().length;
      expect((await proxied(url('/t24'))).status).toBe(500);
      await topology.dataPlanes[0]!.process.waitForOutput(/error:\[string \\?"TMP\\?"\]:1: attempt to call a nil value \(global 'foo'\)/, 10_000, from);
    });

    it('type function is available in template environment', async () => {
      const headers = await getWithRawHeaders(url('/t25'), ['Host', new URL(topology.proxyUrl).host, 'X-Foo', '1', 'X-Foo', '2']);
      expect(headers['x-foo-transformed']).toBe('1-first');
    });

    it("can inject a value from 'kong.ctx.shared'", async () => {
      expect(new URLSearchParams((await proxied(url('/t21'))).body.query).get('shared_param1')).toBe('1.2.3');
    });

    it('cannot write a value in `kong.ctx.shared`', async () => {
      expect((await proxied(url('/t28'))).status).toBe(500);
    });
  });

  describe('Plugin: request-transformer(access) untrusted_lua=sandbox using template', () => {
    it('should succeed when template accesses allowed Lua function from sandbox', async () => {
      const res = await proxied(url('/sandbox1?user=foo'));
      expect(res.body.headers['x-added']).toBe('string');
    });

    it('should fail when template tries to access non allowed Lua function from sandbox', async () => {
      const from = output().length;
      expect((await proxied(url('/sandbox2?user=foo'))).status).toBe(500);
      await topology.dataPlanes[0]!.process.waitForOutput("attempt to index a nil value (global 'string')", 10_000, from);
    });

    it('should fail when template tries to require non whitelisted module from sandbox', async () => {
      const from = output().length;
      expect((await proxied(url('/sandbox3?user=foo'))).status).toBe(500);
      await topology.dataPlanes[0]!.process.waitForOutput("require 'inspect' not allowed within sandbox", 10_000, from);
    });
  });

  describe('custom_fields_by_lua', () => {
    it('file-log and http-log entries carry the fields the chunks return; nil removes a field', async () => {
      const res = await proxied(url('/logged'), { headers: { 'x-team': 'blue' } });
      expect(res.status).toBe(200);
      const path = join(dir, 'file.log');
      const line = await until(() => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').find((l) => l.includes('"team":"blue"')) : undefined));
      const sent = await until(() => receiver.entries.find((e) => e.team === 'blue'));
      for (const entry of [JSON.parse(line) as Record<string, unknown>, sent]) {
        expect(entry.team).toBe('blue');
        expect((entry.request as Record<string, unknown>).flag).toBe('on');
        expect(entry.status_seen).toBe(200);
        expect('client_ip' in entry).toBe(false);
      }
    });

    it('a chunk that does not compile is refused at creation', async () => {
      const res = await admin('POST', '/plugins', { name: 'file-log', config: { path: join(dir, 'x.log'), custom_fields_by_lua: { f: 'return (' } } });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.fields)).toContain('Error parsing function: [string');
    });
  });
});
