// RBAC wired through the real `gatehouse` processes: GATEHOUSE_ENFORCE_RBAC=on with a bootstrap GATEHOUSE_ADMIN_TOKEN,
// tokens in Kong-Admin-Token, the built-in read-only role, disabled users, the proxy left alone, and a restart.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const INVALID = { message: 'Invalid RBAC credentials' };

/** Admin requests carrying `token` (when given) in Kong-Admin-Token; form-encoded writes. */
function adminAs(adminUrl: string, token?: string) {
  const send = async (method: string, path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = token === undefined ? {} : { 'kong-admin-token': token };
    let body: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(`${adminUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let json: any = text;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    if (res.status >= 500) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return { status: res.status, body: json };
  };
  return {
    get: (path: string) => send('GET', path),
    post: (path: string, form: Record<string, string> = {}) => send('POST', path, form),
    patch: (path: string, form: Record<string, string>) => send('PATCH', path, form),
    delete: (path: string) => send('DELETE', path),
  };
}

describe.each(TOPOLOGIES)('RBAC enforced by the gatehouse process (%s)', (name) => {
  const bootstrapToken = randomBytes(24).toString('hex');
  const readerToken = `reader-${randomBytes(12).toString('hex')}`;
  const serviceReaderToken = `svc-${randomBytes(12).toString('hex')}`;
  let topology: Topology;
  let upstream: EchoUpstream;
  let root: ReturnType<typeof adminAs>;
  let reader: ReturnType<typeof adminAs>;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_ENFORCE_RBAC: 'on', GATEHOUSE_ADMIN_TOKEN: bootstrapToken } });
    root = adminAs(topology.adminUrl, bootstrapToken);
    reader = adminAs(topology.adminUrl, readerToken);
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  it('refuses admin requests without a token, or with an unknown one: 401 Invalid RBAC credentials', async () => {
    for (const path of ['/services', '/consumers', '/rbac/users', '/status']) {
      const anonymous = await adminAs(topology.adminUrl).get(path);
      expect(anonymous).toEqual({ status: 401, body: INVALID });
    }
    expect(await adminAs(topology.adminUrl).post('/consumers', { username: 'sneaky' })).toEqual({ status: 401, body: INVALID });
    expect(await adminAs(topology.adminUrl, 'not-a-token').get('/services')).toEqual({ status: 401, body: INVALID });
    expect(await adminAs(topology.adminUrl, `${bootstrapToken}x`).get('/services')).toEqual({ status: 401, body: INVALID });
  });

  it('lets the bootstrap token (super-admin) read, configure the proxy and create RBAC users and roles', async () => {
    const services = await root.get('/services');
    expect(services.status).toBe(200);
    expect(services.body.data).toEqual([]);

    expect((await root.post('/services', { name: 'echo', url: `${upstream.url}/` })).status).toBe(201);
    expect((await root.post('/services/echo/routes', { name: 'echo-route', 'paths[]': '/echo' })).status).toBe(201);
    expect((await root.post('/consumers', { username: 'carol' })).status).toBe(201);

    const user = await root.post('/rbac/users', { name: 'reader', user_token: readerToken });
    expect(user.status).toBe(201);
    expect(user.body.name).toBe('reader');
    expect(user.body.enabled).toBe(true);
    expect(user.body.user_token).not.toBe(readerToken);
    const roles = await root.post('/rbac/users/reader/roles', { roles: 'read-only' });
    expect(roles.status).toBe(201);
    expect(roles.body.roles.map((r: { name: string }) => r.name)).toEqual(['read-only']);

    // a custom role through the same token: read on /services only
    expect((await root.post('/rbac/roles', { name: 'service-reader' })).status).toBe(201);
    for (const endpoint of ['/services', '/services/*']) {
      const perm = await root.post('/rbac/roles/service-reader/endpoints', { workspace: 'default', endpoint, actions: 'read' });
      expect(perm.status).toBe(201);
      expect(perm.body.actions).toEqual(['read']);
    }
    expect((await root.post('/rbac/users', { name: 'svc-reader', user_token: serviceReaderToken })).status).toBe(201);
    expect((await root.post('/rbac/users/svc-reader/roles', { roles: 'service-reader' })).status).toBe(201);
  });

  it('a read-only user reads /consumers but may not create one: 403 naming the user', async () => {
    const list = await reader.get('/consumers');
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { username: string }) => c.username)).toEqual(['carol']);
    expect((await reader.get('/consumers/carol')).status).toBe(200);
    expect((await reader.get('/services/echo')).status).toBe(200);

    const create = await reader.post('/consumers', { username: 'dave' });
    expect(create).toEqual({ status: 403, body: { message: 'reader, you do not have permissions to create this resource' } });
    expect(await reader.patch('/consumers/carol', { custom_id: 'c-1' })).toEqual({ status: 403, body: { message: 'reader, you do not have permissions to update this resource' } });
    expect(await reader.delete('/consumers/carol')).toEqual({ status: 403, body: { message: 'reader, you do not have permissions to delete this resource' } });
    // nothing was written
    expect((await root.get('/consumers/dave')).status).toBe(404);
    expect((await root.get('/consumers/carol')).body.custom_id).toBeNull();
  });

  it('a custom role allows exactly its endpoints', async () => {
    const svcReader = adminAs(topology.adminUrl, serviceReaderToken);
    expect((await svcReader.get('/services')).status).toBe(200);
    expect((await svcReader.get('/services/echo')).status).toBe(200);
    expect(await svcReader.get('/consumers')).toEqual({ status: 403, body: { message: 'svc-reader, you do not have permissions to read this resource' } });
    expect((await svcReader.post('/services', { name: 'nope', url: 'http://127.0.0.1:1' })).status).toBe(403);
  });

  it('a disabled user is 401; enabled again, its token works', async () => {
    // the same token is sent back: a PATCH without user_token would issue a new one
    const disabled = await root.patch('/rbac/users/reader', { enabled: 'false', user_token: readerToken });
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    expect(await reader.get('/consumers')).toEqual({ status: 401, body: INVALID });
    expect(await reader.post('/consumers', { username: 'dave' })).toEqual({ status: 401, body: INVALID });

    expect((await root.patch('/rbac/users/reader', { enabled: 'true', user_token: readerToken })).status).toBe(200);
    expect((await reader.get('/consumers')).status).toBe(200);
  });

  it('leaves the proxy alone: configured routes answer on every data plane without any admin token', async () => {
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/echo/hello`);
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/hello');
      const unrouted = await proxied(`${dp.proxyUrl}/nowhere`);
      expect(unrouted.status).toBe(404);
      expect(unrouted.body).toEqual({ message: 'no Route matched with those values' });
    }
  });

  it('after a control-plane restart the bootstrap user exists once and its token, and the others\', still work', async () => {
    await topology.stopControlPlane();
    await topology.startControlPlane();

    const users = await root.get('/rbac/users');
    expect(users.status).toBe(200);
    const names = users.body.data.map((u: { name: string }) => u.name).sort();
    expect(names).toEqual(['gatehouse-admin', 'reader', 'svc-reader']);
    const bootstrapRoles = await root.get('/rbac/users/gatehouse-admin/roles');
    expect(bootstrapRoles.status).toBe(200);
    expect(bootstrapRoles.body.roles.map((r: { name: string }) => r.name)).toEqual(['super-admin']);

    expect((await root.post('/consumers', { username: 'erin' })).status).toBe(201);
    expect((await reader.get('/consumers/erin')).status).toBe(200);
    expect((await reader.post('/consumers', { username: 'frank' })).status).toBe(403);
    expect(await adminAs(topology.adminUrl).get('/services')).toEqual({ status: 401, body: INVALID });

    await topology.converge();
    for (const dp of topology.dataPlanes) expect((await proxied(`${dp.proxyUrl}/echo`)).status).toBe(200);
  });
});
