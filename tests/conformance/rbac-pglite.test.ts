/**
 * The RBAC tables, seeds and enforcement on the embedded database (PGlite), as on Postgres: the same migrations,
 * the same error mapping, the same decisions.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

jest.setTimeout(60_000);

const BOOT = 'pglite-boot-token';
let h: RbacHarness;
const as = (token: string) => ({
  get: (path: string) => h.http().get(path).set('Kong-Admin-Token', token),
  post: (path: string, body: Record<string, unknown>) => h.http().post(path).set('Kong-Admin-Token', token).send(body),
  patch: (path: string, body: Record<string, unknown>) => h.http().patch(path).set('Kong-Admin-Token', token).send(body),
});

beforeAll(async () => {
  h = await startRbacAdmin({ mode: 'both', adminToken: BOOT, backend: 'pglite' });
});
afterAll(async () => {
  await h?.close();
});

describe('RBAC on PGlite', () => {
  it('seeds the default workspace and the built-in roles', async () => {
    const roles = await as(BOOT).get('/rbac/roles');
    expect(roles.status).toBe(200);
    expect(roles.body.data.map((r: { name: string }) => r.name).sort()).toEqual(['admin', 'read-only', 'super-admin']);
    const ws = await as(BOOT).get('/workspaces');
    expect(ws.body.data.map((w: { name: string }) => w.name)).toEqual(['default']);
  });

  it('users, roles, permissions and their errors', async () => {
    expect((await as(BOOT).post('/rbac/users', { name: 'p', user_token: 'p-token' })).status).toBe(201);
    expect((await as(BOOT).post('/rbac/users', { name: 'p', user_token: 'other' })).status).toBe(409);
    expect((await as(BOOT).post('/rbac/roles', { name: 'svc' })).status).toBe(201);
    expect((await as(BOOT).post('/rbac/roles/svc/endpoints', { endpoint: '/services', actions: 'read' })).status).toBe(201);
    expect((await as(BOOT).post('/rbac/roles/svc/endpoints', { endpoint: '/services', actions: 'read' })).body.name).toBe('primary key violation');
    expect((await as(BOOT).post('/rbac/roles/svc/entities', { entity_id: '*', actions: 'read' })).status).toBe(201);
    expect((await as(BOOT).post('/rbac/users/p/roles', { roles: 'svc' })).status).toBe(201);
  });

  it('enforces endpoint and entity rules', async () => {
    expect((await as('p-token').get('/services')).status).toBe(200);
    expect((await as('p-token').get('/consumers')).status).toBe(403);
    expect((await as('nope').get('/services')).status).toBe(401);
    await as(BOOT).patch('/rbac/users/p', { enabled: false, user_token: 'p-token' });
    expect((await as('p-token').get('/services')).status).toBe(401);
  });
});
