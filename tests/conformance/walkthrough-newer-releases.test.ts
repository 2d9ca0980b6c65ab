import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/**
 * interface.md, "Configuration of authentication (newer releases)": each row as the table gives it, form-encoded.
 */
describe.each(['postgres', 'pglite'] as const)('configuration of authentication, newer releases (%s)', (backend) => {
  let admin: AdminHarness;
  const state: { serviceId?: string; pluginId?: string; consumerId?: string } = {};

  beforeAll(async () => {
    admin = await startAdmin(backend);
  });
  afterAll(async () => {
    await admin?.close();
  });

  it('POST /services/ with name, url returns the service', async () => {
    const res = await admin.http().post('/services/').type('form').send({ name: 'example-service', url: 'http://upstream.test:8080/base' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'example-service', protocol: 'http', host: 'upstream.test', port: 8080, path: '/base' });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.serviceId = res.body.id;
  });

  it('POST /services/<service_name>/routes with paths[] returns the route', async () => {
    const res = await admin.http().post('/services/example-service/routes').type('form').send('paths[]=/example');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ paths: ['/example'], service: { id: state.serviceId }, strip_path: true });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('POST /services/<service_name>/plugins/ with name returns the plugin with its id', async () => {
    const res = await admin.http().post('/services/example-service/plugins/').type('form').send({ name: 'key-auth' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'key-auth', service: { id: state.serviceId }, route: null, consumer: null, enabled: true });
    expect(res.body.config).toMatchObject({ key_names: ['apikey'], anonymous: null, hide_credentials: false });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.pluginId = res.body.id;
  });

  it('POST /consumers/ with username returns HTTP 201 with username, created_at, id', async () => {
    const res = await admin.http().post('/consumers/').type('form').send({ username: 'anonymous_users' });
    expect(res.status).toBe(201);
    expect(res.body.username).toBe('anonymous_users');
    expect(Number.isInteger(res.body.created_at)).toBe(true);
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    state.consumerId = res.body.id;
  });

  it('PATCH /plugins/<plugin_id> with config.anonymous = <consumer_id> returns the plugin', async () => {
    const res = await admin.http().patch(`/plugins/${state.pluginId}`).type('form').send({ 'config.anonymous': state.consumerId });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(state.pluginId);
    expect(res.body.config.anonymous).toBe(state.consumerId);
    // the rest of the config is kept (PATCH merges)
    expect(res.body.config.key_names).toEqual(['apikey']);
  });

  it('config.anonymous is not checked for existence', async () => {
    const dangling = '9b0f8c5e-1d2a-4c3b-8e4f-5a6b7c8d9e0f';
    const res = await admin.http().patch(`/plugins/${state.pluginId}`).type('form').send({ 'config.anonymous': dangling });
    expect(res.status).toBe(200);
    expect(res.body.config.anonymous).toBe(dangling);
  });

  it('each write bumped the config version once', async () => {
    expect(admin.committed).toEqual([1, 2, 3, 4, 5, 6]);
    const status = await admin.http().get('/status');
    expect(status.body.config_version).toBe(6);
  });
});
