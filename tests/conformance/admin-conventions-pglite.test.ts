import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/** The embedded database behind the same admin API: a subset of the conventions, on PGlite. */
let admin: AdminHarness;
beforeAll(async () => {
  admin = await startAdmin('pglite');
});
afterAll(async () => {
  await admin?.close();
});
const http = () => admin.http();

describe('admin conventions on the embedded database', () => {
  it('decodes form, multipart and JSON bodies alike', async () => {
    await http().post('/services').type('form').send('name=pgl&url=http://pgl.test&retries=3');
    const form = await http().post('/services/pgl/routes').type('form').send('paths[1]=/a&paths[2]=/b&strip_path=false');
    expect(form.body).toMatchObject({ paths: ['/a', '/b'], strip_path: false });
    const multipart = await http().post('/consumers').field('username', 'pgl-user').field('tags[]', 'x');
    expect(multipart.body).toMatchObject({ username: 'pgl-user', tags: ['x'] });
    const json = await http().post('/consumers').send({ custom_id: 'pgl-json' });
    expect(json.status).toBe(201);
  });

  it('maps unique and foreign key violations', async () => {
    expect((await http().post('/consumers').send({ username: 'pgl-user' })).status).toBe(409);
    const fk = await http().post('/routes').send({ paths: ['/x'], service: { id: '0e5d3c4b-aaaa-4bbb-8ccc-000000000001' } });
    expect(fk.body.code).toBe(4);
    const restrict = await http().delete('/services/pgl');
    expect(restrict.status).toBe(400);
    expect(restrict.body.fields).toEqual({ '@referenced_by': 'routes' });
  });

  it('pages and filters by tags', async () => {
    for (let i = 0; i < 3; i++) await http().post('/consumers').send({ username: `pgl-page-${i}`, tags: ['pgl-page'] });
    const first = await http().get('/consumers?size=2&tags=pgl-page');
    expect(first.body.data).toHaveLength(2);
    const second = await http().get(first.body.next);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.next).toBeNull();
  });

  it('credentials cascade with their consumer', async () => {
    const key = await http().post('/consumers/pgl-user/key-auth').send({});
    expect(key.body.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await http().delete('/consumers/pgl-user')).status).toBe(204);
    expect((await http().get(`/key-auths/${key.body.key}`)).status).toBe(404);
  });

  it('a failing write leaves nothing behind and keeps the version', async () => {
    await http().post('/services/pgl/routes').send({ name: 'pgl-taken', paths: ['/taken'] });
    const before = (await http().get('/status')).body.config_version;
    const res = await http().post('/apis').send({ name: 'pgl-taken', uris: ['/t'], upstream_url: 'http://t.test' });
    expect(res.status).toBe(409);
    expect((await http().get('/services/pgl-taken')).status).toBe(404);
    expect((await http().get('/status')).body.config_version).toBe(before);
  });

  it('concurrent writes are serialised, each with its own version', async () => {
    const before = (await http().get('/status')).body.config_version;
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => http().post('/consumers').send({ username: `pgl-par-${i}` })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect((await http().get('/status')).body.config_version).toBe(before + 6);
  });
});
