import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/**
 * interface.md, "Configuration of authentication (older releases)": each row as the table gives it, form-encoded.
 */
describe.each(['postgres', 'pglite'] as const)('configuration of authentication, older releases (%s)', (backend) => {
  let admin: AdminHarness;
  const state: { apiId?: string; pluginId?: string; consumerId?: string } = {};

  beforeAll(async () => {
    admin = await startAdmin(backend);
  });
  afterAll(async () => {
    await admin?.close();
  });

  it('POST /apis/ with name, uris, upstream_url returns the api', async () => {
    const res = await admin.http().post('/apis/').type('form').send({ name: 'example-api', uris: '/example', upstream_url: 'http://upstream.test/base' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'example-api', uris: ['/example'], upstream_url: 'http://upstream.test/base', strip_uri: true });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.apiId = res.body.id;
  });

  it('the api is stored as a service + route pair named after it', async () => {
    const service = await admin.http().get('/services/example-api');
    expect(service.status).toBe(200);
    expect(service.body).toMatchObject({ host: 'upstream.test', path: '/base', protocol: 'http', port: 80 });
    const route = await admin.http().get('/routes/example-api');
    expect(route.status).toBe(200);
    expect(route.body).toMatchObject({ paths: ['/example'], strip_path: true, service: { id: service.body.id } });
  });

  it('POST /apis/<api_name>/plugins/ with name returns the plugin with its id', async () => {
    const res = await admin.http().post('/apis/example-api/plugins/').type('form').send({ name: 'key-auth' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'key-auth', api_id: state.apiId });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.pluginId = res.body.id;
  });

  it('POST /consumers/ with username returns HTTP 201 with username, created_at, id', async () => {
    const res = await admin.http().post('/consumers/').type('form').send({ username: 'anonymous_users' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ username: 'anonymous_users' });
    expect(Number.isInteger(res.body.created_at)).toBe(true);
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.consumerId = res.body.id;
  });

  it('PATCH /apis/<api_name>/plugins/<plugin_id> with config.anonymous = <consumer_id> returns the plugin', async () => {
    const res = await admin.http().patch(`/apis/example-api/plugins/${state.pluginId}`).type('form').send({ 'config.anonymous': state.consumerId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: state.pluginId, name: 'key-auth', api_id: state.apiId });
    expect(res.body.config.anonymous).toBe(state.consumerId);
  });

  it('the plugin is the service plugin seen by the newer endpoints', async () => {
    const res = await admin.http().get(`/services/example-api/plugins`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([state.pluginId]);
  });
});
