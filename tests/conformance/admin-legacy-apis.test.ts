import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/** kong-reference §5.4 and decision 6: the 0.10–0.14 `/apis` interface, kept over services + routes. */
let admin: AdminHarness;
beforeAll(async () => {
  admin = await startAdmin('postgres');
});
afterAll(async () => {
  await admin?.close();
});
const http = () => admin.http();

describe('legacy /apis', () => {
  it('validates name and upstream_url, and needs one of hosts, uris or methods', async () => {
    const empty = await http().post('/apis').type('form').send({});
    expect(empty.status).toBe(400);
    expect(empty.body.fields).toEqual({ name: 'required field missing', upstream_url: 'required field missing' });
    const noMatch = await http().post('/apis').type('form').send({ name: 'no-match', upstream_url: 'http://u.test' });
    expect(noMatch.status).toBe(400);
    expect(noMatch.body.fields['@entity']).toEqual(["at least one of 'hosts', 'uris' or 'methods' must be specified"]);
    const badUrl = await http().post('/apis').type('form').send({ name: 'bad-url', uris: '/b', upstream_url: 'ftp://u.test' });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.fields).toHaveProperty('upstream_url');
  });

  it('accepts comma-separated lists, trims a trailing slash of uris and defaults strip_uri to true', async () => {
    const res = await http()
      .post('/apis')
      .type('form')
      .send({ name: 'lists', uris: '/one/,/two', methods: 'GET,POST', hosts: 'a.test', upstream_url: 'http://lists.test/up' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ uris: ['/one', '/two'], methods: ['GET', 'POST'], hosts: ['a.test'], strip_uri: true, preserve_host: false });
    const route = await http().get('/routes/lists');
    expect(route.body).toMatchObject({ paths: ['/one', '/two'], methods: ['GET', 'POST'], hosts: ['a.test'], strip_path: true });
  });

  it('GET by name or id, and the list', async () => {
    const created = await http().post('/apis').send({ name: 'readable', uris: ['/r'], upstream_url: 'http://r.test' });
    expect((await http().get('/apis/readable')).body.id).toBe(created.body.id);
    expect((await http().get(`/apis/${created.body.id}`)).body.name).toBe('readable');
    const list = await http().get('/apis');
    expect(list.body.data.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(['readable', 'lists']));
    expect(list.body.next).toBeNull();
  });

  it('PATCH updates the API and the service + route behind it', async () => {
    await http().post('/apis').send({ name: 'patchable', uris: ['/p'], upstream_url: 'http://p.test' });
    const res = await http().patch('/apis/patchable').type('form').send({ upstream_url: 'https://p2.test:8443/base', strip_uri: 'false' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ upstream_url: 'https://p2.test:8443/base', strip_uri: false, uris: ['/p'] });
    expect((await http().get('/services/patchable')).body).toMatchObject({ protocol: 'https', host: 'p2.test', port: 8443, path: '/base' });
    expect((await http().get('/routes/patchable')).body.strip_path).toBe(false);
  });

  it('PUT /apis creates without an id (201) and fully updates with the id of an existing API (200)', async () => {
    const created = await http().put('/apis').send({ name: 'put-api', uris: ['/put'], upstream_url: 'http://put.test' });
    expect(created.status).toBe(201);
    const updated = await http().put('/apis').send({ id: created.body.id, name: 'put-api', hosts: ['put.test'], upstream_url: 'http://put2.test' });
    expect(updated.status).toBe(200);
    expect(updated.body.id).toBe(created.body.id);
    expect(updated.body.hosts).toEqual(['put.test']);
    expect(updated.body).not.toHaveProperty('uris');
  });

  it('a second API with the same name is a 409', async () => {
    const res = await http().post('/apis').send({ name: 'readable', uris: ['/again'], upstream_url: 'http://r.test' });
    expect(res.status).toBe(409);
  });

  it('plugins: list, read, and DELETE; uniqueness per API', async () => {
    await http().post('/apis').send({ name: 'with-plugins', uris: ['/wp'], upstream_url: 'http://wp.test' });
    const plugin = await http().post('/apis/with-plugins/plugins').type('form').send({ name: 'key-auth' });
    expect(plugin.status).toBe(201);
    expect((await http().post('/apis/with-plugins/plugins').type('form').send({ name: 'key-auth' })).status).toBe(409);
    const list = await http().get('/apis/with-plugins/plugins');
    expect(list.body.data).toHaveLength(1);
    expect((await http().get(`/apis/with-plugins/plugins/${plugin.body.id}`)).body.name).toBe('key-auth');
    expect((await http().get(`/apis/readable/plugins/${plugin.body.id}`)).status).toBe(404);
    expect((await http().delete(`/apis/with-plugins/plugins/${plugin.body.id}`)).status).toBe(204);
    expect((await http().get(`/plugins/${plugin.body.id}`)).status).toBe(404);
  });

  it('DELETE removes the API with its service, route and plugins; absent APIs are 404', async () => {
    await http().post('/apis').send({ name: 'doomed-api', uris: ['/d'], upstream_url: 'http://d.test' });
    const plugin = await http().post('/apis/doomed-api/plugins').send({ name: 'key-auth' });
    expect((await http().delete('/apis/doomed-api')).status).toBe(204);
    expect((await http().get('/apis/doomed-api')).status).toBe(404);
    expect((await http().get('/services/doomed-api')).status).toBe(404);
    expect((await http().get('/routes/doomed-api')).status).toBe(404);
    expect((await http().get(`/plugins/${plugin.body.id}`)).status).toBe(404);
    expect((await http().delete('/apis/doomed-api')).status).toBe(404);
    expect((await http().get('/apis/nothing/plugins')).status).toBe(404);
  });
});
