// DB-less mode (GATEHOUSE_DATABASE=off, decision 36): `gatehouse start` and a lone `gatehouse data-plane` serve a
// declarative file with no database; the admin API answers as Kong's `database = off` one (Kong's
// spec/02-integration/04-admin_api/15-off_spec.lua), and `POST /config` is how the Kong Ingress Controller feeds it.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { deleteRedisPrefix, freePorts, SHARED_REDIS_URL, startEchoUpstream, uniqueRedisPrefix, type EchoUpstream, type SpawnedProcess } from '@gatehouse/testkit';
import { basicAuth, cleanUp, waitUntil } from './support/helpers';
import { jsonAdmin, proxied, spawnGatehouse } from './support/topology';

const CONSUMER_ID = 'd885e256-1abe-5e24-80b6-8f68fe59ea8e';

const fileDocument = (upstream: string) => `_format_version: "3.0"
services:
  - name: echo
    url: ${upstream}
    tags: [managed-by-ingress-controller]
    routes:
      - name: keyed
        paths: [/keyed]
        plugins:
          - name: key-auth
      - name: basic
        paths: [/basic]
        plugins:
          - name: basic-auth
      - name: open
        paths: [/open]
consumers:
  - username: alice
    keyauth_credentials:
      - key: alice-key
    basicauth_credentials:
      - username: alice
        password: alice-password
  - username: bob
`;

/** the two ways to run without a database: one process with the admin API, or a data plane alone */
const MODES = [
  { name: 'start', command: 'start' as const, admin: true },
  { name: 'data-plane alone', command: 'data-plane' as const, admin: false },
];

describe.each(MODES)('DB-less: the declarative file served with no database ($name)', ({ command, admin }) => {
  let upstream: EchoUpstream;
  let node: SpawnedProcess;
  let dir: string;
  let proxyUrl: string;
  let adminUrl: string;

  const call = (method: string, path: string, body?: unknown) => jsonAdmin(adminUrl, method, path, body);
  const raw = (method: string, path: string, body: string, type: string) => fetch(`${adminUrl}${path}`, { method, headers: { 'content-type': type }, body });

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-dbless-'));
    writeFileSync(join(dir, 'kong.yml'), fileDocument(upstream.url));
    const [adminPort, proxyPort, statusPort] = await freePorts(3);
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    node = await spawnGatehouse(
      command,
      {
        GATEHOUSE_DATABASE: 'off',
        GATEHOUSE_DECLARATIVE_CONFIG: join(dir, 'kong.yml'),
        GATEHOUSE_DATA_DIR: join(dir, 'data'),
        GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
        GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        // no Redis and no database for this node, whatever the environment holds
        REDIS_URL: '',
        DATABASE_URL: '',
      },
      admin ? /admin API listening/ : /status API listening/,
    );
  });

  afterAll(() => cleanUp(() => node?.stop(), () => upstream?.close(), () => rmSync(dir, { recursive: true, force: true })));

  it('proxies the routes of the file, with its plugins and credentials, and starts no database', async () => {
    expect((await proxied(`${proxyUrl}/open`)).status).toBe(200);
    expect((await proxied(`${proxyUrl}/keyed`)).status).toBe(403);
    const keyed = await proxied(`${proxyUrl}/keyed`, { headers: { apikey: 'alice-key' } });
    expect(keyed.status).toBe(200);
    expect(keyed.body.headers['x-consumer-username']).toBe('alice');
    // the document gave the password in clear: it is hashed once at load, and verifies
    expect((await proxied(`${proxyUrl}/basic`, { headers: { authorization: basicAuth('alice', 'alice-password') } })).status).toBe(200);
    expect((await proxied(`${proxyUrl}/basic`, { headers: { authorization: basicAuth('alice', 'wrong') } })).status).toBe(401);
    expect(existsSync(join(dir, 'data', 'db'))).toBe(false);
  });

  if (!admin) return;

  it('GET / reports database off, and /status the configuration hash without a database entry', async () => {
    const root = await call('GET', '/');
    expect(root.status).toBe(200);
    expect(root.body.configuration.database).toBe('off');
    // Kong's other configuration keys, as Kong Manager's Overview reads them
    expect(root.body.configuration.router_flavor).toBe('traditional_compatible');
    expect(Array.isArray(root.body.configuration.admin_listeners)).toBe(true);
    const status = await call('GET', '/status');
    expect(status.body.configuration_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(status.body.database).toBeUndefined();
  });

  it('reads work: lists with paging, lookups by name, nested lists, tags, /schemas', async () => {
    const first = await call('GET', '/consumers?size=1');
    expect(first.body.data).toHaveLength(1);
    expect(first.body.next).toMatch(/^\/consumers\?offset=/);
    const second = await call('GET', first.body.next);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(second.body.next).toBeNull();
    expect((await call('GET', '/consumers/alice')).body.username).toBe('alice');
    expect((await call('GET', '/consumers/nobody')).status).toBe(404);
    const routes = await call('GET', '/services/echo/routes');
    expect(routes.body.data.map((r: { name: string }) => r.name).sort()).toEqual(['basic', 'keyed', 'open']);
    expect((await call('GET', '/routes/keyed/service')).body.name).toBe('echo');
    expect((await call('GET', '/consumers/alice/key-auth')).body.data[0].key).toBe('alice-key');
    expect((await call('GET', '/services?tags=managed-by-ingress-controller')).body.data).toHaveLength(1);
    expect((await call('GET', '/routes?tags=managed-by-ingress-controller')).body.data).toHaveLength(0);
    expect((await call('GET', '/tags/managed-by-ingress-controller')).body.data).toEqual([{ entity_name: 'services', entity_id: expect.any(String), tag: 'managed-by-ingress-controller' }]);
    const schema = await call('GET', '/schemas/services');
    expect(schema.status).toBe(200);
    expect(Array.isArray(schema.body.fields)).toBe(true);
    expect((await call('GET', '/schemas/plugins/key-auth')).status).toBe(200);
  });

  // Kong's off_spec: /routes POST "doesn't allow to creates a route"
  it("doesn't allow to creates a route", async () => {
    for (const [body, type] of [
      [JSON.stringify({ paths: ['/x'] }), 'application/json'],
      ['paths[]=/x', 'application/x-www-form-urlencoded'],
    ] as const) {
      const res = await raw('POST', '/routes', body, type);
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual({ code: 12, name: 'operation unsupported', message: "cannot create 'routes' entities when not using a database" });
    }
  });

  // Kong's off_spec: /routes "returns HTTP 405 on invalid method"
  it('returns HTTP 405 on invalid method (collection)', async () => {
    for (const method of ['DELETE', 'PUT', 'PATCH']) {
      const res = await call(method, '/routes', { paths: ['/'] });
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ message: 'Method not allowed' });
    }
  });

  // Kong's off_spec: /routes/{route} "returns HTTP 405 on invalid method"
  it('returns HTTP 405 on invalid method (one entity), with the operation named', async () => {
    const put = await call('PUT', '/routes/keyed', { paths: ['/'] });
    expect(put).toEqual({ status: 405, body: { code: 12, name: 'operation unsupported', message: "cannot create or update 'routes' entities when not using a database" } });
    expect((await call('PATCH', '/routes/keyed', { paths: ['/'] })).body.message).toBe("cannot update 'routes' entities when not using a database");
    expect((await call('DELETE', '/consumers/alice')).body.message).toBe("cannot remove 'consumers' entities when not using a database");
    expect((await call('POST', '/consumers/alice/key-auth', { key: 'k' })).body.message).toBe("cannot create 'keyauth_credentials' entities when not using a database");
    expect((await call('POST', '/routes/keyed', {})).body).toEqual({ message: 'Method not allowed' });
    // nothing changed
    expect((await proxied(`${proxyUrl}/keyed`, { headers: { apikey: 'alice-key' } })).status).toBe(200);
  });

  // Kong's off_spec: /routes GET errors "handles invalid offsets"
  it('handles invalid offsets', async () => {
    const x = await call('GET', '/routes?offset=x');
    expect(x.status).toBe(400);
    expect(x.body).toMatchObject({ code: 7, name: 'invalid offset', message: "'x' is not a valid offset: bad base64 encoding" });
    const potato = await call('GET', '/routes?offset=%7Cpotato%7C');
    expect(potato.status).toBe(400);
    expect(potato.body.code).toBe(7);
  });

  // Kong's off_spec: /config POST "returns 400 on an invalid config string" and "returns 400 when given no input"
  it('returns 400 on an invalid config string, and when given no input', async () => {
    expect(await call('POST', '/config', { config: 'bobby tables' })).toEqual({
      status: 400,
      body: {
        code: 14,
        name: 'invalid declarative configuration',
        message: 'declarative config is invalid: {error="failed parsing declarative configuration: expected an object"}',
        fields: { error: 'failed parsing declarative configuration: expected an object' },
      },
    });
    expect(await call('POST', '/config')).toEqual({ status: 400, body: { message: 'expected a declarative configuration' } });
  });

  // Kong Ingress Controller: it pushes with ?flatten_errors=1 and reads `flattened_errors` to report per resource
  it('Kong Ingress Controller: flattened errors name the entity, its tags and each field', async () => {
    const doc = { _format_version: '3.0', services: [{ name: 'bad', host: 'example.com', port: -12, tags: ['k8s-name:bad', 'k8s-kind:Service'] }] };
    const res = await call('POST', '/config?flatten_errors=1', doc);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(14);
    expect(res.body.flattened_errors).toEqual([
      expect.objectContaining({ entity_type: 'service', entity_name: 'bad', entity_tags: ['k8s-name:bad', 'k8s-kind:Service'], errors: [expect.objectContaining({ type: 'field', field: 'port' })] }),
    ]);
    // the configuration in force did not change
    expect((await proxied(`${proxyUrl}/keyed`, { headers: { apikey: 'alice-key' } })).status).toBe(200);
  });

  // Kong's off_spec: "accepts configuration as JSON body" / "as YAML body" / "as a JSON string under `config` JSON key"
  it('accepts configuration as a JSON body, a YAML body and a string under `config`; the proxy follows each', async () => {
    const json = await call('POST', '/config', { _format_version: '1.1', consumers: [{ username: 'bobby_in_json_body' }] });
    expect(json.status).toBe(201);
    expect(json.body.consumers[0].username).toBe('bobby_in_json_body');
    await waitUntil('the proxy drops the old routes', async () => (await proxied(`${proxyUrl}/open`)).status === 404);
    const yaml = await raw('POST', '/config', `_format_version: "3.0"\nservices:\n  - name: y\n    url: ${upstream.url}\n    routes:\n      - paths: [/yaml]\n`, 'application/yaml');
    expect(yaml.status).toBe(201);
    await waitUntil('the proxy serves the YAML body', async () => (await proxied(`${proxyUrl}/yaml`)).status === 200);
    const asString = await call('POST', '/config', { config: `_format_version: "3.0"\nconsumers:\n  - username: bobby_tables\n` });
    expect(asString.status).toBe(201);
    expect((await call('GET', '/consumers/bobby_tables')).status).toBe(200);
    expect((await call('GET', '/services/y')).status).toBe(404);
  });

  // Kong's off_spec: "returns 304 if checking hash and configuration is identical"; the Kong Ingress Controller
  // pushes every sync with ?check_hash=1 and takes 304 as "nothing to do"
  it('Kong Ingress Controller: returns 304 if checking hash and configuration is identical', async () => {
    const doc = { config: `_format_version: "1.1"\nconsumers:\n- username: bobby_hash\n` };
    expect((await call('POST', '/config?check_hash=1', doc)).status).toBe(201);
    const hash = (await call('GET', '/status')).body.configuration_hash;
    expect((await call('POST', '/config?check_hash=1', doc)).status).toBe(304);
    expect((await call('GET', '/status')).body.configuration_hash).toBe(hash);
    // without the flag the same document is loaded again
    expect((await call('POST', '/config', doc)).status).toBe(201);
  });

  // decK's test data: a Kong 3.9 export (`_transform: false`, format 1.1) pushed as it is
  it("a Kong dump pushed as it is: Kong's basic-auth digests verify, 1.1 regex paths match as regexes", async () => {
    const consumer = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
    const digest = createHash('sha1').update(`kong-password${consumer}`).digest('hex');
    const dump = {
      _format_version: '1.1',
      _transform: false,
      services: [{ name: 'dump', url: upstream.url, routes: [{ paths: ['/users/\\d+'], plugins: [{ name: 'basic-auth' }] }] }],
      consumers: [{ id: consumer, username: 'kong-user', _comment: 'from Kong', basicauth_credentials: [{ username: 'kong-user', password: digest }] }],
    };
    expect((await call('POST', '/config', dump)).status).toBe(201);
    const login = { headers: { authorization: basicAuth('kong-user', 'kong-password') } };
    await waitUntil('the dump is served', async () => (await proxied(`${proxyUrl}/users/7`, login)).status === 200);
    expect((await proxied(`${proxyUrl}/users/7`, { headers: { authorization: basicAuth('kong-user', 'nope') } })).status).toBe(401);
    expect((await proxied(`${proxyUrl}/users/x`, login)).status).toBe(404);
    // what GET /config gives back loads again as it is, and is the same configuration (check_hash: 304)
    const exported = parseYaml((await call('GET', '/config')).body.config);
    expect(exported._transform).toBe(false);
    expect(exported.basicauth_credentials[0].password).toBe(digest);
    expect((await call('POST', '/config', exported)).status).toBe(201);
    expect((await call('POST', '/config?check_hash=1', exported)).status).toBe(304);
    expect((await proxied(`${proxyUrl}/users/7`, login)).status).toBe(200);
  });

  // Kong's off_spec: /config GET "returns back the configuration"
  it('returns back the configuration', async () => {
    const posted = await call('POST', '/config', { _format_version: '1.1', consumers: [{ username: 'bobo', id: CONSUMER_ID, created_at: 1566863706 }] });
    expect(posted.status).toBe(201);
    const res = await call('GET', '/config');
    expect(res.status).toBe(200);
    const config = parseYaml(res.body.config);
    expect(config).toEqual({
      _format_version: '3.0',
      _transform: false,
      consumers: [{ id: CONSUMER_ID, created_at: 1566863706, updated_at: config.consumers[0].updated_at, username: 'bobo' }],
    });
  });
});

// beyond Kong: control planes without a database, fed by POST /config, publishing to every data plane over Redis
describe('DB-less control planes over Redis: one push, every data plane; a restart resumes', () => {
  let upstream: EchoUpstream;
  const prefix = uniqueRedisPrefix('e2e-dbless');
  const secret = randomBytes(24).toString('hex');
  let dir: string;
  let ports: number[];
  let cpA: SpawnedProcess;
  let cpB: SpawnedProcess;
  let dp: SpawnedProcess;
  const common = () => ({ REDIS_URL: SHARED_REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix, GATEHOUSE_CLUSTER_SECRET: secret, DATABASE_URL: '' });
  const controlPlane = (adminPort: number, name: string) =>
    spawnGatehouse('control-plane', { ...common(), GATEHOUSE_DATABASE: 'off', GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`, GATEHOUSE_DATA_DIR: join(dir, name) }, /admin API listening/, name);
  const admin = (i: 0 | 1) => `http://127.0.0.1:${ports[i]}`;
  const proxyUrl = () => `http://127.0.0.1:${ports[2]}`;
  const documentFor = (path: string) => ({ _format_version: '3.0', services: [{ name: 'pushed', url: upstream.url, routes: [{ name: 'pushed', paths: [path] }] }], consumers: [{ username: `for-${path.slice(1)}` }] });

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-dbless-cp-'));
    ports = await freePorts(4);
    cpA = await controlPlane(ports[0]!, 'cp-a');
    cpB = await controlPlane(ports[1]!, 'cp-b');
    dp = await spawnGatehouse(
      'data-plane',
      { ...common(), GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${ports[2]}`, GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${ports[3]}`, GATEHOUSE_DATA_DIR: join(dir, 'dp') },
      /status API listening/,
    );
  });

  afterAll(() =>
    cleanUp(
      () => cpA?.stop(),
      () => cpB?.stop(),
      () => dp?.stop(),
      () => upstream?.close(),
      () => deleteRedisPrefix(SHARED_REDIS_URL, prefix),
      () => rmSync(dir, { recursive: true, force: true }),
    ),
  );

  it('a push to one control plane reaches the data plane and the other control plane', async () => {
    expect((await jsonAdmin(admin(0), 'POST', '/config', documentFor('/first'))).status).toBe(201);
    await waitUntil('the data plane serves the push', async () => (await proxied(`${proxyUrl()}/first`)).status === 200);
    await waitUntil('the other control plane follows', async () => (await jsonAdmin(admin(1), 'GET', '/consumers/for-first')).status === 200);
    // the other one takes the next push from where the first left off
    expect((await jsonAdmin(admin(1), 'POST', '/config', documentFor('/second'))).status).toBe(201);
    await waitUntil('the data plane serves the second push', async () => (await proxied(`${proxyUrl()}/second`)).status === 200);
    expect((await proxied(`${proxyUrl()}/first`)).status).toBe(404);
    await waitUntil('the first control plane follows back', async () => (await jsonAdmin(admin(0), 'GET', '/consumers/for-second')).status === 200);
    // the data plane reports itself to both control planes, at the configuration they hold
    const hash = (await jsonAdmin(admin(0), 'GET', '/status')).body.configuration_hash;
    expect(hash).toBe((await jsonAdmin(admin(1), 'GET', '/status')).body.configuration_hash);
    await waitUntil('the data plane is listed', async () => (await jsonAdmin(admin(1), 'GET', '/clustering/data-planes')).body.data.length === 1);
  });

  it('a restarted control plane resumes the last applied document from Redis, and the data plane keeps serving it', async () => {
    const before = (await jsonAdmin(admin(0), 'GET', '/status')).body.configuration_hash;
    await cpA.stop();
    cpA = await controlPlane(ports[0]!, 'cp-a');
    expect((await jsonAdmin(admin(0), 'GET', '/consumers/for-second')).status).toBe(200);
    expect((await jsonAdmin(admin(0), 'GET', '/status')).body.configuration_hash).toBe(before);
    expect((await proxied(`${proxyUrl()}/second`)).status).toBe(200);
  });
});
