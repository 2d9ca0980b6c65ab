/**
 * RBAC enforcement on the admin API (issue 5 point 4, kong-reference Part B §2–§3), GATEHOUSE_ENFORCE_RBAC=on
 * (endpoint checks): built-in and custom roles over a matrix of endpoints × methods, credentials, disabled users,
 * deleted roles, the self-modification guard, cross-workspace writes and the bootstrap super-admin.
 * Entity-level checks: rbac-entity.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { hashToken, tokenIdent } from '@gatehouse/control-plane';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

jest.setTimeout(60_000);

const BOOT = 'boot-token-0123456789';
let h: RbacHarness;

type Body = Record<string, unknown>;
const as = (token: string) => ({
  get: (path: string) => h.http().get(path).set('Kong-Admin-Token', token),
  post: (path: string, body: Body = {}) => h.http().post(path).set('Kong-Admin-Token', token).send(body),
  put: (path: string, body: Body = {}) => h.http().put(path).set('Kong-Admin-Token', token).send(body),
  patch: (path: string, body: Body = {}) => h.http().patch(path).set('Kong-Admin-Token', token).send(body),
  delete: (path: string, body?: Body) => {
    const req = h.http().delete(path).set('Kong-Admin-Token', token);
    return body ? req.send(body) : req;
  },
});
const boot = () => as(BOOT);

async function ok<T extends { status: number; body: unknown }>(pending: PromiseLike<T>, status: number): Promise<T> {
  const res = await pending;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res;
}

/** a user with these roles (names, in the default workspace) and this token */
async function user(name: string, token: string, roles: string[] = []): Promise<void> {
  await ok(boot().post('/rbac/users', { name, user_token: token }), 201);
  if (roles.length) await ok(boot().post(`/rbac/users/${name}/roles`, { roles: roles.join(',') }), 201);
}

async function role(name: string, endpoints: Array<{ endpoint: string; actions: string; workspace?: string; negative?: boolean }>, prefix = ''): Promise<void> {
  await ok(boot().post(`${prefix}/rbac/roles`, { name }), 201);
  for (const e of endpoints) await ok(boot().post(`${prefix}/rbac/roles/${name}/endpoints`, e), 201);
}

let ws1Id: string;

beforeAll(async () => {
  h = await startRbacAdmin({ mode: 'on', adminToken: BOOT });
  await ok(boot().post('/services', { name: 's1', url: 'http://upstream.test' }), 201);
  await ok(boot().post('/consumers', { username: 'c1' }), 201);
  ws1Id = (await ok(boot().post('/workspaces', { name: 'ws1' }), 201)).body.id;
  await user('ro', 'ro-token', ['read-only']);
  await user('ad', 'ad-token', ['admin']);
  await user('sa', 'sa-token', ['super-admin']);
  await user('victim', 'victim-token');
  await ok(boot().post('/rbac/roles', { name: 'victim-role' }), 201);
});

afterAll(async () => {
  await h?.close();
});

describe('credentials', () => {
  it('no token, an unknown token, an empty token and a token sent twice are 401 Invalid RBAC credentials', async () => {
    for (const res of [
      await h.http().get('/services'),
      await as('not-a-token').get('/services'),
      await h.http().get('/services').set('Kong-Admin-Token', ''),
      await h.http().get('/services').set('Kong-Admin-Token', ['ro-token', 'ro-token'] as unknown as string),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Invalid RBAC credentials' });
    }
  });

  it('the bootstrap token (GATEHOUSE_ADMIN_TOKEN) is a super-admin named gatehouse-admin, created once', async () => {
    const roles = await ok(boot().get('/rbac/users/gatehouse-admin/roles'), 200);
    expect(roles.body.roles.map((r: { name: string }) => r.name)).toEqual(['super-admin']);
    expect(await h.rbac.bootstrap()).toBe(false);
    const users = await ok(boot().get('/rbac/users'), 200);
    expect(users.body.data.filter((u: { name: string }) => u.name === 'gatehouse-admin')).toHaveLength(1);
  });

  it('a user without roles may do nothing', async () => {
    const res = await as('victim-token').get('/services');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'victim, you do not have permissions to read this resource' });
  });
});

describe('built-in roles: endpoints × methods', () => {
  type Row = [label: string, call: (role: string, token: string) => PromiseLike<{ status: number }>, expected: { ro: number; ad: number; sa: number }];
  const api = (token: string) => as(token);
  const rows: Row[] = [
    ['GET /', (_r, t) => api(t).get('/'), { ro: 200, ad: 200, sa: 200 }],
    ['GET /status', (_r, t) => api(t).get('/status'), { ro: 200, ad: 200, sa: 200 }],
    ['GET /services', (_r, t) => api(t).get('/services'), { ro: 200, ad: 200, sa: 200 }],
    ['GET /services/s1', (_r, t) => api(t).get('/services/s1'), { ro: 200, ad: 200, sa: 200 }],
    ['GET /ws1/services', (_r, t) => api(t).get('/ws1/services'), { ro: 200, ad: 200, sa: 200 }],
    ['POST /consumers', (r, t) => api(t).post('/consumers', { username: `${r}-new` }), { ro: 403, ad: 201, sa: 201 }],
    ['PATCH /services/s1', (_r, t) => api(t).patch('/services/s1', { retries: 3 }), { ro: 403, ad: 200, sa: 200 }],
    ['PUT /consumers/{name}', (r, t) => api(t).put(`/consumers/${r}-put`, {}), { ro: 403, ad: 200, sa: 200 }],
    ['DELETE /consumers/{name}', (r, t) => api(t).delete(`/consumers/${r}-del`), { ro: 403, ad: 204, sa: 204 }],
    ['GET /workspaces', (_r, t) => api(t).get('/workspaces'), { ro: 200, ad: 200, sa: 200 }],
    ['POST /workspaces', (r, t) => api(t).post('/workspaces', { name: `${r}-ws` }), { ro: 403, ad: 201, sa: 201 }],
    ['GET /rbac/users', (_r, t) => api(t).get('/rbac/users'), { ro: 200, ad: 403, sa: 200 }],
    ['GET /rbac/users/victim', (_r, t) => api(t).get('/rbac/users/victim'), { ro: 200, ad: 403, sa: 200 }],
    ['PATCH /rbac/users/victim', (_r, t) => api(t).patch('/rbac/users/victim', { comment: 'x', user_token: 'victim-token' }), { ro: 403, ad: 403, sa: 200 }],
    ['POST /rbac/users', (r, t) => api(t).post('/rbac/users', { name: `${r}-made`, user_token: `${r}-made-token` }), { ro: 403, ad: 403, sa: 201 }],
    ['GET /rbac/roles', (_r, t) => api(t).get('/rbac/roles'), { ro: 200, ad: 403, sa: 200 }],
    ['POST /rbac/roles', (r, t) => api(t).post('/rbac/roles', { name: `${r}-role` }), { ro: 403, ad: 403, sa: 201 }],
    ['DELETE /rbac/roles/{name}', (r, t) => api(t).delete(`/rbac/roles/${r}-tmp`), { ro: 403, ad: 403, sa: 204 }],
    ['GET /rbac/roles/admin/permissions', (_r, t) => api(t).get('/rbac/roles/admin/permissions'), { ro: 200, ad: 403, sa: 200 }],
    ['POST /rbac/roles/victim-role/endpoints', (r, t) => api(t).post('/rbac/roles/victim-role/endpoints', { endpoint: `/${r}/a/b/c/d/e`, actions: 'read' }), { ro: 403, ad: 403, sa: 201 }],
    ['GET /rbac/roles/read-only/endpoints/*/* (deep path)', (_r, t) => api(t).get('/rbac/roles/read-only/endpoints/*/*'), { ro: 200, ad: 403, sa: 200 }],
    ['GET /rbac/roles/victim-role/endpoints/default/sa/a/b/c/d/e (9 segments)', (_r, t) => api(t).get('/rbac/roles/victim-role/endpoints/default/sa/a/b/c/d/e'), { ro: 200, ad: 403, sa: 200 }],
    ['POST /rbac/users/victim/roles', (_r, t) => api(t).post('/rbac/users/victim/roles', { roles: 'victim-role' }), { ro: 403, ad: 403, sa: 201 }],
    ['GET /ws1/rbac/roles (workspace prefix)', (_r, t) => api(t).get('/ws1/rbac/roles'), { ro: 200, ad: 403, sa: 200 }],
    ['GET /admins', (_r, t) => api(t).get('/admins'), { ro: 200, ad: 403, sa: 200 }],
    ['POST /admins', (r, t) => api(t).post('/admins', { username: `${r}-admin` }), { ro: 403, ad: 403, sa: 201 }],
    ['GET /RBAC/users (routing is case-sensitive: no way around the rule)', (_r, t) => api(t).get('/RBAC/users'), { ro: 404, ad: 404, sa: 404 }],
  ];

  beforeAll(async () => {
    for (const r of ['ro', 'ad', 'sa']) {
      await ok(boot().post('/consumers', { username: `${r}-del` }), 201);
      await ok(boot().post('/rbac/roles', { name: `${r}-tmp` }), 201);
    }
  });

  for (const [label, call, expected] of rows) {
    for (const [r, token] of [
      ['ro', 'ro-token'],
      ['ad', 'ad-token'],
      ['sa', 'sa-token'],
    ] as const) {
      it(`${r === 'ro' ? 'read-only' : r === 'ad' ? 'admin' : 'super-admin'}: ${label} → ${expected[r]}`, async () => {
        const res = (await call(r, token)) as { status: number; body: unknown };
        expect({ status: res.status, body: res.status === 403 ? res.body : undefined }).toEqual({
          status: expected[r],
          body: expected[r] === 403 ? { message: expect.stringMatching(new RegExp(`^${r}, you do not have permissions to (read|create|update|delete) this resource$`)) } : undefined,
        });
      });
    }
  }

  it('403 names the action from the method: GET read, POST create, PUT/PATCH update, DELETE delete', async () => {
    expect((await as('ad-token').get('/rbac/users')).body.message).toBe('ad, you do not have permissions to read this resource');
    expect((await as('ad-token').post('/rbac/users')).body.message).toBe('ad, you do not have permissions to create this resource');
    expect((await as('ad-token').put('/rbac/roles/x')).body.message).toBe('ad, you do not have permissions to update this resource');
    expect((await as('ad-token').patch('/rbac/roles/x')).body.message).toBe('ad, you do not have permissions to update this resource');
    expect((await as('ad-token').delete('/rbac/roles/x')).body.message).toBe('ad, you do not have permissions to delete this resource');
  });
});

describe('custom roles', () => {
  beforeAll(async () => {
    await role('svc-reader', [
      { endpoint: '/services', actions: 'read' },
      { endpoint: '/services/*', actions: 'read' },
    ]);
    await user('reader', 'reader-token', ['svc-reader']);
    await role('no-consumer-delete', [
      { workspace: '*', endpoint: '*', actions: '*' },
      { workspace: '*', endpoint: '/consumers/*', actions: 'delete', negative: true },
    ]);
    await user('nodel', 'nodel-token', ['no-consumer-delete']);
    await role('ws1-all', [{ workspace: 'ws1', endpoint: '*', actions: '*' }]);
    await user('w1', 'w1-token', ['ws1-all']);
    await role('exact-beats-wildcard', [
      { endpoint: '/services/s1', actions: 'read' },
      { endpoint: '/services/*', actions: 'read', negative: true },
      { endpoint: '/services', actions: 'read' },
    ]);
    await user('exact', 'exact-token', ['exact-beats-wildcard']);
    await ok(boot().post('/services', { name: 's2', url: 'http://upstream.test' }), 201);
    await ok(boot().post('/consumers', { username: 'to-delete' }), 201);
    await ok(boot().post('/services', { name: 'svc-to-delete', url: 'http://upstream.test' }), 201);
  });

  it.each([
    ['reader', 'reader-token', 'get', '/services', 200],
    ['reader', 'reader-token', 'get', '/services/s1', 200],
    ['reader', 'reader-token', 'post', '/services', 403],
    ['reader', 'reader-token', 'patch', '/services/s1', 403],
    ['reader', 'reader-token', 'get', '/consumers', 403],
    ['reader', 'reader-token', 'get', '/services/s1/routes', 403],
    ['reader', 'reader-token', 'get', '/ws1/services', 403],
    ['reader', 'reader-token', 'get', '/rbac/users', 403],
    ['nodel', 'nodel-token', 'get', '/consumers/to-delete', 200],
    ['nodel', 'nodel-token', 'delete', '/consumers/to-delete', 403],
    ['nodel', 'nodel-token', 'delete', '/services/svc-to-delete', 204],
    ['w1', 'w1-token', 'get', '/ws1/services', 200],
    ['w1', 'w1-token', 'post', '/ws1/consumers', 201],
    ['w1', 'w1-token', 'get', '/services', 403],
    ['w1', 'w1-token', 'get', '/default/services', 403],
    ['exact', 'exact-token', 'get', '/services/s1', 200],
    ['exact', 'exact-token', 'get', '/services/s2', 403],
    ['exact', 'exact-token', 'get', '/services', 200],
  ] as const)('%s (%s): %s %s → %i', async (_user, token, method, path, status) => {
    const api = as(token);
    const res = method === 'post' ? await api.post(path, { username: 'w1-made' }) : method === 'patch' ? await api.patch(path, { retries: 1 }) : await api[method](path);
    expect(res.status).toBe(status);
  });

  it('negative wins at the same key: adding a role that denies /services turns 200 into 403, removing it gives 200 back', async () => {
    await role('deny-services', [{ endpoint: '/services', actions: 'read', negative: true }]);
    expect((await as('reader-token').get('/services')).status).toBe(200);
    await ok(boot().post('/rbac/users/reader/roles', { roles: 'deny-services' }), 201);
    expect((await as('reader-token').get('/services')).status).toBe(403);
    await ok(boot().delete('/rbac/users/reader/roles', { roles: 'deny-services' }), 204);
    expect((await as('reader-token').get('/services')).status).toBe(200);
  });

  it('a permission change applies to the next request (no stale permissions)', async () => {
    expect((await as('reader-token').get('/consumers')).status).toBe(403);
    await ok(boot().post('/rbac/roles/svc-reader/endpoints', { endpoint: '/consumers', actions: 'read' }), 201);
    expect((await as('reader-token').get('/consumers')).status).toBe(200);
    await ok(boot().delete('/rbac/roles/svc-reader/endpoints/default/consumers'), 204);
    expect((await as('reader-token').get('/consumers')).status).toBe(403);
  });
});

describe('users and roles that change', () => {
  beforeAll(async () => {
    await role('temp-role', [{ endpoint: '/services', actions: 'read' }]);
    await user('temp', 'temp-token', ['temp-role']);
    await user('rotator', 'rotator-token', ['read-only']);
  });

  it('a disabled user is 401; enabled again, it works', async () => {
    expect((await as('temp-token').get('/services')).status).toBe(200);
    await ok(boot().patch('/rbac/users/temp', { enabled: false, user_token: 'temp-token' }), 200);
    const res = await as('temp-token').get('/services');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid RBAC credentials' });
    await ok(boot().patch('/rbac/users/temp', { enabled: true, user_token: 'temp-token' }), 200);
    expect((await as('temp-token').get('/services')).status).toBe(200);
  });

  it('a deleted role no longer grants anything', async () => {
    await ok(boot().delete('/rbac/roles/temp-role'), 204);
    expect((await as('temp-token').get('/services')).status).toBe(403);
  });

  it('a deleted user is 401', async () => {
    await ok(boot().delete('/rbac/users/temp'), 204);
    expect((await as('temp-token').get('/services')).status).toBe(401);
  });

  it('PATCH without user_token generates a token: the old one stops working, the new one (shown once) works', async () => {
    expect((await as('rotator-token').get('/services')).status).toBe(200);
    const res = await ok(boot().patch('/rbac/users/rotator', { comment: 'rotated' }), 200);
    const fresh = res.body.generated_user_token as string;
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await as('rotator-token').get('/services')).status).toBe(401);
    expect((await as(fresh).get('/services')).status).toBe(200);
    await ok(boot().patch('/rbac/users/rotator', { user_token: 'rotator-token' }), 200);
    expect((await as(fresh).get('/services')).status).toBe(401);
    expect((await as('rotator-token').get('/services')).status).toBe(200);
  });

  it('a token changed behind this node (another control plane) is refused at once, despite the cache', async () => {
    expect((await as('rotator-token').get('/services')).status).toBe(200);
    const users = h.database.db.selectFrom('rbac_users').select('entity').where('name', '=', 'rotator');
    const { entity } = await users.executeTakeFirstOrThrow();
    const changed = { ...entity, user_token: await hashToken('rotator-elsewhere'), user_token_ident: tokenIdent('rotator-elsewhere') };
    await h.database.db.updateTable('rbac_users').set({ entity: JSON.stringify(changed) }).where('name', '=', 'rotator').execute();
    expect((await as('rotator-token').get('/services')).status).toBe(401);
    expect((await as('rotator-elsewhere').get('/services')).status).toBe(200);
  });
});

describe('self-modification guard', () => {
  beforeAll(async () => {
    await role('selfish-extra', [{ endpoint: '/services', actions: 'read' }]);
    await user('selfish', 'selfish-token', ['super-admin', 'selfish-extra']);
  });

  it.each([
    ['POST own role endpoints', 'post', '/rbac/roles/selfish-extra/endpoints', { endpoint: '/x', actions: 'read' }, 'the admin should not update their own roles'],
    ['POST super-admin endpoints', 'post', '/rbac/roles/super-admin/endpoints', { endpoint: '/x', actions: 'read' }, 'the admin should not update their own roles'],
    ['PATCH own endpoint', 'patch', '/rbac/roles/selfish-extra/endpoints/default/services', { negative: true }, 'the admin should not update or delete their own endpoints'],
    ['DELETE own endpoint', 'delete', '/rbac/roles/super-admin/endpoints/*/*', undefined, 'the admin should not update or delete their own endpoints'],
    ['DELETE own role', 'delete', '/rbac/roles/selfish-extra', undefined, 'the admin should not delete their own roles'],
    ['POST own user roles', 'post', '/rbac/users/selfish/roles', { roles: 'admin' }, 'the admin should not update their own roles'],
    ['DELETE own user roles', 'delete', '/rbac/users/selfish/roles', { roles: 'selfish-extra' }, 'the admin should not update their own roles'],
    ['POST own role entities', 'post', '/rbac/roles/selfish-extra/entities', { entity_id: '*', actions: 'read' }, 'the admin should not update their own roles'],
  ] as const)('%s → 403', async (_label, method, path, body, message) => {
    const api = as('selfish-token');
    const res = method === 'delete' ? await api.delete(path, body) : await api[method](path, body);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message });
  });

  it('nothing changed, and the same user may change other users and roles', async () => {
    const roles = await ok(boot().get('/rbac/users/selfish/roles'), 200);
    expect(roles.body.roles.map((r: { name: string }) => r.name).sort()).toEqual(['selfish-extra', 'super-admin']);
    await ok(boot().post('/rbac/roles', { name: 'others' }), 201);
    await ok(as('selfish-token').post('/rbac/roles/others/endpoints', { endpoint: '/x', actions: 'read' }), 201);
    await ok(as('selfish-token').post('/rbac/users/victim/roles', { roles: 'others' }), 201);
  });
});

describe('cross-workspace permissions', () => {
  beforeAll(async () => {
    await ok(boot().post('/ws1/rbac/roles', { name: 'ws1-team' }), 201);
  });

  it('a workspace admin writes permissions for its own workspace only', async () => {
    const own = await as('w1-token').post('/ws1/rbac/roles/ws1-team/endpoints', { endpoint: '/services', actions: 'read' });
    expect(own.status).toBe(201);
    expect(own.body.workspace).toBe('ws1');
    for (const workspace of ['default', '*']) {
      const res = await as('w1-token').post('/ws1/rbac/roles/ws1-team/endpoints', { endpoint: '/consumers', actions: 'read', workspace });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'w1 is not allowed to create cross workspace permissions' });
    }
    const sa = await as('sa-token').post('/ws1/rbac/roles/ws1-team/endpoints', { endpoint: '/consumers', actions: 'read', workspace: 'default' });
    expect(sa.status).toBe(201);
  });

  it('GET /workspaces is always readable, filtered to the workspaces the caller has rules in', async () => {
    const w1 = await ok(as('w1-token').get('/workspaces'), 200);
    expect(w1.body.data.map((w: { name: string }) => w.name)).toEqual(['ws1']);
    const sa = await ok(as('sa-token').get('/workspaces'), 200);
    expect(sa.body.data.map((w: { name: string }) => w.name)).toEqual(expect.arrayContaining(['default', 'ws1']));
    expect((await as('w1-token').get(`/workspaces/${ws1Id}`)).status).toBe(403);
  });
});
