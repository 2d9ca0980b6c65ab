import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { MemoryHealthChannel, type ManualHealthCommand } from '@gatehouse/sync';
import { readSnapshotConfig } from '@gatehouse/control-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { startAdmin, type AdminHarness, type BackendName } from './support/admin-harness';

jest.setTimeout(60_000);

/**
 * kong-reference decision 21: upstreams and targets with Kong 3.x's fields, defaults, validation messages, endpoints,
 * cascades, paging and PUT upsert; `/upstreams/{u}/health` from data-plane reports; manual health broadcast.
 * The same tests on Postgres and on the embedded database.
 */
describe.each<BackendName>(['postgres', 'pglite'])('upstreams and targets (%s)', (backend) => {
  let admin: AdminHarness;
  const health = new MemoryHealthChannel();
  beforeAll(async () => {
    admin = await startAdmin(backend, { health });
  });
  afterAll(async () => {
    await admin?.close();
  });
  const http = () => admin.http();

  it('creates an upstream with every Kong default filled', async () => {
    const res = await http().post('/upstreams').send({ name: 'example.upstream' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'example.upstream',
      algorithm: 'round-robin',
      hash_on: 'none',
      hash_fallback: 'none',
      hash_on_header: null,
      hash_fallback_header: null,
      hash_on_cookie: null,
      hash_on_cookie_path: '/',
      hash_on_query_arg: null,
      hash_fallback_query_arg: null,
      hash_on_uri_capture: null,
      hash_fallback_uri_capture: null,
      slots: 10000,
      tags: null,
      host_header: null,
      client_certificate: null,
      use_srv_name: false,
    });
    expect(res.body.healthchecks).toEqual({
      active: {
        type: 'http',
        timeout: 1,
        concurrency: 10,
        http_path: '/',
        https_sni: null,
        https_verify_certificate: true,
        headers: null,
        healthy: { interval: 0, http_statuses: [200, 302], successes: 0 },
        unhealthy: { interval: 0, http_statuses: [429, 404, 500, 501, 502, 503, 504, 505], tcp_failures: 0, timeouts: 0, http_failures: 0 },
      },
      passive: {
        type: 'http',
        healthy: { http_statuses: [200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 306, 307, 308], successes: 0 },
        unhealthy: { http_statuses: [429, 500, 503], tcp_failures: 0, timeouts: 0, http_failures: 0 },
      },
      threshold: 0,
    });
    expect(Number.isInteger(res.body.created_at)).toBe(true);
    expect(Number.isInteger(res.body.updated_at)).toBe(true);
  });

  it('validates the upstream name, algorithm, slots and hashing fields with Kong messages', async () => {
    const missing = await http().post('/upstreams').send({});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ code: 2, name: 'schema violation', message: 'schema violation (name: required field missing)', fields: { name: 'required field missing' } });
    const ip = await http().post('/upstreams').send({ name: '10.0.0.1' });
    expect(ip.body.fields).toEqual({ name: "Invalid name ('10.0.0.1'); no ip addresses allowed" });
    const port = await http().post('/upstreams').send({ name: 'a.test:80' });
    expect(port.body.fields).toEqual({ name: "Invalid name ('a.test:80'); no port allowed" });
    const bad = await http().post('/upstreams').send({ name: 'not a host' });
    expect(bad.body.fields).toEqual({ name: "Invalid name ('not a host'); must be a valid hostname" });
    const algo = await http().post('/upstreams').send({ name: 'algo.test', algorithm: 'random' });
    expect(algo.status).toBe(400);
    expect(algo.body.fields.algorithm).toBe('expected one of: consistent-hashing, least-connections, round-robin, latency');
    const slots = await http().post('/upstreams').send({ name: 'slots.test', slots: 5 });
    expect(slots.body.fields).toEqual({ slots: 'value should be between 10 and 65536' });
    const header = await http().post('/upstreams').send({ name: 'hash.test', hash_on: 'header' });
    expect(header.body.fields).toEqual({ hash_on_header: 'required field missing' });
    const fallback = await http().post('/upstreams').send({ name: 'hash.test', hash_on: 'none', hash_fallback: 'ip' });
    expect(fallback.body.fields).toEqual({ hash_fallback: 'expected one of: none' });
    const cookie = await http().post('/upstreams').send({ name: 'hash.test', hash_on: 'cookie' });
    expect(cookie.body.fields).toEqual({ hash_on_cookie: 'required field missing' });
    const nested = await http().post('/upstreams').send({ name: 'hc.test', healthchecks: { active: { healthy: { successes: 300 } } } });
    expect(nested.status).toBe(400);
    expect(nested.body.fields.healthchecks.active.healthy.successes).toBe('value should be between 0 and 255');
    const unknown = await http().post('/upstreams').send({ name: 'hc.test', healthchecks: { active: { foo: 1 } } });
    expect(unknown.body.fields.healthchecks.active.foo).toBe('unknown field');
    expect((await http().get('/upstreams/hash.test')).status).toBe(404);
  });

  it('keeps nested healthcheck defaults when only a part is given, and merges a PATCH deeply', async () => {
    const created = await http()
      .post('/upstreams')
      .send({ name: 'checked.test', algorithm: 'consistent-hashing', hash_on: 'header', hash_on_header: 'x-user', healthchecks: { active: { http_path: '/status', healthy: { interval: 5, successes: 2 } } } });
    expect(created.status).toBe(201);
    expect(created.body.healthchecks.active).toMatchObject({ http_path: '/status', timeout: 1, healthy: { interval: 5, successes: 2, http_statuses: [200, 302] } });
    const patched = await http().patch('/upstreams/checked.test').send({ healthchecks: { active: { unhealthy: { http_failures: 3 } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.healthchecks.active).toMatchObject({ http_path: '/status', healthy: { interval: 5, successes: 2 }, unhealthy: { http_failures: 3, interval: 0 } });
    const form = await http().post('/upstreams').type('form').send('name=form.test&healthchecks.active.healthy.interval=3&slots=100&tags[]=a');
    expect(form.status).toBe(201);
    expect(form.body).toMatchObject({ slots: 100, tags: ['a'], healthchecks: { active: { healthy: { interval: 3 } } } });
  });

  it('is found by id or name, listed with paging and tags, and upserted by PUT', async () => {
    for (let i = 0; i < 3; i++) await http().post('/upstreams').send({ name: `page${i}.test`, tags: ['paged'] });
    const first = await http().get('/upstreams?size=2&tags=paged');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.next).toMatch(/^\/upstreams\?offset=.+&size=2&tags=paged$/);
    const second = await http().get(first.body.next);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.next).toBeNull();
    const byName = await http().get('/upstreams/page0.test');
    expect((await http().get(`/upstreams/${byName.body.id}`)).body.name).toBe('page0.test');

    const put = await http().put('/upstreams/put.test').send({ algorithm: 'least-connections', tags: ['x'] });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'put.test', algorithm: 'least-connections' });
    const replaced = await http().put('/upstreams/put.test').send({});
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: put.body.id, algorithm: 'round-robin', tags: null });
    expect((await http().post('/upstreams').send({ name: 'put.test' })).status).toBe(409);
  });

  it('describes both entities in /schemas and the OpenAPI document', async () => {
    const upstreamSchema = await http().get('/schemas/upstreams');
    expect(upstreamSchema.status).toBe(200);
    const fields = Object.assign({}, ...upstreamSchema.body.fields);
    expect(fields.algorithm).toMatchObject({ type: 'string', default: 'round-robin', one_of: ['consistent-hashing', 'least-connections', 'round-robin', 'latency'] });
    expect(fields.slots).toMatchObject({ type: 'integer', default: 10000, between: [10, 65536] });
    expect(fields.healthchecks.type).toBe('record');
    const targetSchema = await http().get('/schemas/targets');
    expect(Object.assign({}, ...targetSchema.body.fields).weight).toMatchObject({ type: 'integer', default: 100, between: [0, 65535] });
    const validate = await http().post('/schemas/upstreams/validate').send({ name: 'ok.test', algorithm: 'latency' });
    expect(validate.status).toBe(200);
    const openapi = await http().get('/openapi.json');
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/upstreams', '/targets']));
  });

  it('adds targets as host:port with port 8000 when omitted and weight 100 by default', async () => {
    const up = await http().post('/upstreams').send({ name: 'targets.test' });
    const plain = await http().post('/upstreams/targets.test/targets').send({ target: 'a.example' });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ target: 'a.example:8000', weight: 100, upstream: { id: up.body.id }, tags: null });
    const v6 = await http().post(`/upstreams/${up.body.id}/targets`).send({ target: '[::1]', weight: 5 });
    expect(v6.body).toMatchObject({ target: '[::1]:8000', weight: 5 });
    const ip = await http().post('/upstreams/targets.test/targets').type('form').send('target=127.0.0.1:9001&weight=0');
    expect(ip.body).toMatchObject({ target: '127.0.0.1:9001', weight: 0 });

    const bad = await http().post('/upstreams/targets.test/targets').send({ target: 'bad host' });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual({ target: "Invalid target ('bad host'); not a valid hostname or ip address" });
    const heavy = await http().post('/upstreams/targets.test/targets').send({ target: 'b.example', weight: 70000 });
    expect(heavy.body.fields).toEqual({ weight: 'value should be between 0 and 65535' });
    const dup = await http().post('/upstreams/targets.test/targets').send({ target: 'a.example:8000' });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe(5);
    expect((await http().post('/upstreams/nope.test/targets').send({ target: 'x.example' })).status).toBe(404);

    const list = await http().get('/upstreams/targets.test/targets');
    expect(list.body.data.map((t: { target: string }) => t.target).sort()).toEqual(['127.0.0.1:9001', '[::1]:8000', 'a.example:8000']);
    const all = await http().get('/upstreams/targets.test/targets/all');
    expect(all.body.data).toHaveLength(3);
    const paged = await http().get('/upstreams/targets.test/targets?size=2');
    expect(paged.body.next).toMatch(/^\/upstreams\/targets\.test\/targets\?offset=/);
  });

  it('reads, patches, replaces and deletes a target by id or host:port inside its upstream', async () => {
    await http().post('/upstreams').send({ name: 'one.test' });
    await http().post('/upstreams').send({ name: 'two.test' });
    const t1 = await http().post('/upstreams/one.test/targets').send({ target: 'shared.example:81' });
    const t2 = await http().post('/upstreams/two.test/targets').send({ target: 'shared.example:81', weight: 7 });
    expect((await http().get('/upstreams/two.test/targets/shared.example:81')).body.id).toBe(t2.body.id);
    expect((await http().get(`/upstreams/one.test/targets/${t1.body.id}`)).body.weight).toBe(100);
    expect((await http().get(`/upstreams/one.test/targets/${t2.body.id}`)).status).toBe(404);
    expect((await http().get('/upstreams/one.test/targets/shared.example')).status).toBe(404);

    const patched = await http().patch('/upstreams/one.test/targets/shared.example:81').send({ weight: 3 });
    expect(patched.body).toMatchObject({ id: t1.body.id, weight: 3 });
    const replaced = await http().put('/upstreams/one.test/targets/shared.example:81').send({ tags: ['r'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: t1.body.id, weight: 100, tags: ['r'], target: 'shared.example:81' });
    const created = await http().put('/upstreams/one.test/targets/new.example').send({ weight: 1 });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ target: 'new.example:8000', weight: 1 });

    expect((await http().delete('/upstreams/one.test/targets/shared.example:81')).status).toBe(204);
    expect((await http().get(`/upstreams/one.test/targets/${t1.body.id}`)).status).toBe(404);
    expect((await http().delete('/upstreams/one.test/targets/shared.example:81')).status).toBe(404);
    expect((await http().get('/upstreams/two.test/targets/shared.example:81')).status).toBe(200);
    // outside an upstream a host:port names no single target; an id does
    expect((await http().get('/targets/shared.example:81')).status).toBe(404);
    expect((await http().get(`/targets/${t2.body.id}`)).body.target).toBe('shared.example:81');
    expect((await http().get(`/targets/${t2.body.id}/upstream`)).body.name).toBe('two.test');
  });

  it('deleting an upstream deletes its targets in the same write', async () => {
    await http().post('/upstreams').send({ name: 'cascade.test' });
    const t = await http().post('/upstreams/cascade.test/targets').send({ target: '10.1.1.1:80' });
    expect((await http().delete('/upstreams/cascade.test')).status).toBe(204);
    const row = await admin.database.db.selectFrom('targets').select('id').where('id', '=', t.body.id).executeTakeFirst();
    expect(row).toBeUndefined();
    expect((await http().delete('/upstreams/cascade.test')).status).toBe(204);
  });

  it('puts upstreams and targets in the snapshot', async () => {
    const { config } = await readSnapshotConfig(admin.app.locals.admin.store, { plugins: bundledPlugins });
    expect(config.upstreams.map((u) => u.name)).toContain('targets.test');
    expect(config.targets.map((t) => t.target)).toContain('a.example:8000');
  });

  it('answers /health from the worst report of live data planes, with per-data-plane detail', async () => {
    const up = await http().post('/upstreams').send({ name: 'health.test', healthchecks: { active: { healthy: { interval: 1 } } } });
    await http().post('/upstreams/health.test/targets').send({ target: '127.0.0.1:7001' });
    await http().post('/upstreams/health.test/targets').send({ target: '127.0.0.1:7002' });
    const before = await http().get('/upstreams/health.test/health');
    expect(before.status).toBe(200);
    expect(before.body.data.map((t: { health: string }) => t.health)).toEqual(['HEALTHY', 'HEALTHY']);

    const now = Math.floor(Date.now() / 1000);
    const target = (t: string, h: 'HEALTHY' | 'UNHEALTHY') => ({ target: t, health: h, addresses: [{ ip: '127.0.0.1', port: Number(t.split(':')[1]), health: h, weight: 100 }] });
    await health.report({ data_plane_id: 'dp-a', hostname: 'a', at: now, config_version: 1, upstreams: { [up.body.id]: { health: 'HEALTHY', targets: [target('127.0.0.1:7001', 'HEALTHY'), target('127.0.0.1:7002', 'HEALTHY')] } } });
    await health.report({ data_plane_id: 'dp-b', hostname: 'b', at: now, config_version: 1, upstreams: { [up.body.id]: { health: 'UNHEALTHY', targets: [target('127.0.0.1:7001', 'HEALTHY'), target('127.0.0.1:7002', 'UNHEALTHY')] } } });
    // a data plane that stopped reporting long ago does not count
    await health.report({ data_plane_id: 'dp-old', hostname: 'old', at: now - 3600, config_version: 1, upstreams: { [up.body.id]: { health: 'UNHEALTHY', targets: [target('127.0.0.1:7001', 'UNHEALTHY')] } } });

    const res = await http().get('/upstreams/health.test/health');
    const byTarget = Object.fromEntries(res.body.data.map((t: { target: string }) => [t.target, t]));
    expect(byTarget['127.0.0.1:7001'].health).toBe('HEALTHY');
    expect(byTarget['127.0.0.1:7002'].health).toBe('UNHEALTHY');
    expect(byTarget['127.0.0.1:7002'].data.addresses).toEqual([{ ip: '127.0.0.1', port: 7002, health: 'UNHEALTHY', weight: 100 }]);
    expect(byTarget['127.0.0.1:7002'].data_planes.map((d: { id: string; health: string }) => `${d.id}=${d.health}`).sort()).toEqual(['dp-a=HEALTHY', 'dp-b=UNHEALTHY']);
    const balancer = await http().get('/upstreams/health.test/health?balancer_health=1');
    expect(balancer.body).toEqual({
      data: { health: 'UNHEALTHY', id: up.body.id, details: { data_planes: [{ id: 'dp-a', hostname: 'a', health: 'HEALTHY' }, { id: 'dp-b', hostname: 'b', health: 'UNHEALTHY' }] } },
      next: null,
    });
    expect((await http().get('/upstreams/nope.test/health')).status).toBe(404);
  });

  it('shows HEALTHCHECKS_OFF when no check is configured', async () => {
    await http().post('/upstreams').send({ name: 'off.test' });
    await http().post('/upstreams/off.test/targets').send({ target: '127.0.0.1:7003' });
    const res = await http().get('/upstreams/off.test/health');
    expect(res.body.data[0]).toMatchObject({ target: '127.0.0.1:7003', health: 'HEALTHCHECKS_OFF' });
    expect((await http().get('/upstreams/off.test/health?balancer_health=1')).body.data.health).toBe('HEALTHCHECKS_OFF');
  });

  it('broadcasts manual healthy/unhealthy for a target or one of its addresses (204)', async () => {
    const heard: ManualHealthCommand[] = [];
    const sub = await health.subscribeManual((c) => heard.push(c));
    const up = await http().post('/upstreams').send({ name: 'manual.test' });
    await http().post('/upstreams/manual.test/targets').send({ target: 'svc.example:9000' });
    expect((await http().put('/upstreams/manual.test/targets/svc.example:9000/unhealthy')).status).toBe(204);
    expect((await http().put('/upstreams/manual.test/targets/svc.example:9000/10.0.0.5:9000/healthy')).status).toBe(204);
    expect((await http().put('/upstreams/manual.test/targets/other.example/healthy')).status).toBe(404);
    expect((await http().put('/upstreams/manual.test/targets/svc.example:9000/not-an-ip/healthy')).status).toBe(400);
    for (let i = 0; i < 50 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await sub.close();
    expect(heard).toEqual([
      { upstream_id: up.body.id, target: 'svc.example:9000', healthy: false },
      { upstream_id: up.body.id, target: 'svc.example:9000', address: '10.0.0.5:9000', healthy: true },
    ]);
  });
});
