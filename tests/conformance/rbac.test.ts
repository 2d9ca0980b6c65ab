/**
 * interface.md "RBAC user", "RBAC role", "role_endpoint permission", "role_entity permission", "States and
 * transitions", "RBAC operations", at Kong's paths (kong-reference Part B §1, §4), enforcement off.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

jest.setTimeout(60_000);

let h: RbacHarness;
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

beforeAll(async () => {
  h = await startRbacAdmin({ mode: 'off' });
});
afterAll(async () => {
  await h?.close();
});

const form = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body: string) => h.http()[method](path).type('form').send(body);

describe('RBAC user', () => {
  it('Add a user: 201, user object, token stored hashed, ident = first 5 hex of SHA-1, enabled default true', async () => {
    const res = await form('post', '/rbac/users', 'name=alice&user_token=alice-secret-1&comment=first');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'alice',
      user_token: expect.stringMatching(/^\$2b\$09\$/),
      user_token_ident: sha1('alice-secret-1').slice(0, 5),
      comment: 'first',
      enabled: true,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(Number.isInteger(res.body.created_at)).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain('alice-secret-1');
  });

  it('Add a user with enabled given: enabled = given value', async () => {
    const res = await form('post', '/rbac/users', 'name=dora&user_token=dora-secret&enabled=false');
    expect(res.status).toBe(201);
    expect(res.body.enabled).toBe(false);
  });

  it('Add a user: name and user_token are required; duplicate name is 409; a used token is refused', async () => {
    const missing = await h.http().post('/rbac/users').send({});
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toEqual({ name: 'required field missing', user_token: 'required field missing' });
    const dup = await form('post', '/rbac/users', 'name=alice&user_token=other');
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 5, name: 'unique constraint violation', fields: { name: 'alice' } });
    const sameToken = await form('post', '/rbac/users', 'name=alice2&user_token=alice-secret-1');
    expect(sameToken.status).toBe(400);
    expect(sameToken.body.fields).toEqual({ user_token: expect.any(String) });
    expect((await h.http().get('/rbac/users/alice2')).status).toBe(404);
  });

  it('Retrieve a user by name or id: 200; unknown: 404', async () => {
    const byName = await h.http().get('/rbac/users/alice');
    expect(byName.status).toBe(200);
    const byId = await h.http().get(`/rbac/users/${byName.body.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(byName.body);
    const unknown = await h.http().get('/rbac/users/nobody');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'No RBAC user by name or id nobody' });
  });

  it('List users: 200, data and next (null)', async () => {
    const res = await h.http().get('/rbac/users');
    expect(res.status).toBe(200);
    expect(res.body.next).toBeNull();
    expect(res.body.data.map((u: { name: string }) => u.name).sort()).toEqual(['alice', 'dora']);
  });

  it('List users pages with size and offset', async () => {
    const first = await h.http().get('/rbac/users?size=1');
    expect(first.body.data).toHaveLength(1);
    expect(first.body.next).toBe(`/rbac/users?offset=${encodeURIComponent(first.body.offset)}&size=1`);
    const second = await h.http().get(first.body.next);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(second.body.next).toBeNull();
    expect((await h.http().get('/rbac/users?size=0')).status).toBe(400);
  });

  it('Update a user with enabled given and user_token omitted: enabled changes, a token is generated and shown once', async () => {
    const before = (await h.http().get('/rbac/users/dora')).body;
    const res = await form('patch', '/rbac/users/dora', 'enabled=true');
    expect(res.status).toBe(200);
    expect(res.body.enabled).toBe(true);
    expect(res.body.generated_user_token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(res.body.user_token).toMatch(/^\$2b\$09\$/);
    expect(res.body.user_token).not.toBe(before.user_token);
    expect(res.body.user_token_ident).toBe(sha1(res.body.generated_user_token).slice(0, 5));
    const after = (await h.http().get('/rbac/users/dora')).body;
    expect(after.generated_user_token).toBeUndefined();
    expect(after.user_token).toBe(res.body.user_token);
  });

  it('Update a user with user_token given: the new token is hashed; the same token again keeps the digest', async () => {
    const res = await form('patch', '/rbac/users/dora', 'user_token=dora-new&comment=c2');
    expect(res.status).toBe(200);
    expect(res.body.generated_user_token).toBeUndefined();
    expect(res.body.comment).toBe('c2');
    expect(res.body.user_token_ident).toBe(sha1('dora-new').slice(0, 5));
    const again = await form('patch', '/rbac/users/dora', 'user_token=dora-new&enabled=false');
    expect(again.body.user_token).toBe(res.body.user_token);
    expect(again.body.enabled).toBe(false);
    expect((await form('patch', '/rbac/users/nobody', 'enabled=true')).status).toBe(404);
  });

  it('Delete a user: 204 empty body, then 404; its default role goes with it', async () => {
    await form('post', '/rbac/users', 'name=temp&user_token=temp-token');
    const del = await h.http().delete('/rbac/users/temp');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await h.http().get('/rbac/users/temp')).status).toBe(404);
    expect((await h.http().get('/rbac/roles/temp')).status).toBe(404);
    expect((await h.http().delete('/rbac/users/temp')).status).toBe(404);
  });
});

describe('RBAC role', () => {
  it('The role listing holds the built-in roles admin, read-only and super-admin, and no default roles', async () => {
    const res = await h.http().get('/rbac/roles');
    expect(res.status).toBe(200);
    const names = res.body.data.map((r: { name: string }) => r.name);
    expect(names).toEqual(expect.arrayContaining(['admin', 'read-only', 'super-admin']));
    expect(names).not.toContain('alice');
    expect(res.body.next).toBeNull();
  });

  it('Each user has a default role of its own name, is_default true, hidden from listings', async () => {
    const role = await h.http().get('/rbac/roles/alice');
    expect(role.status).toBe(200);
    expect(role.body.is_default).toBe(true);
    const roles = await h.http().get('/rbac/users/alice/roles');
    expect(roles.body.roles).toEqual([]);
  });

  it('Add a role: 201, role object (comment, created_at, id, is_default, name)', async () => {
    const res = await form('post', '/rbac/roles', 'name=dev&comment=developers');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'dev',
      comment: 'developers',
      is_default: false,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect((await form('post', '/rbac/roles', 'name=dev')).status).toBe(409);
    expect((await form('post', '/rbac/roles', 'comment=x')).body.fields).toEqual({ name: 'required field missing' });
  });

  it('Retrieve a role by name or id', async () => {
    const byName = await h.http().get('/rbac/roles/dev');
    expect(byName.status).toBe(200);
    expect((await h.http().get(`/rbac/roles/${byName.body.id}`)).body).toEqual(byName.body);
    expect((await h.http().get('/rbac/roles/ghost')).status).toBe(404);
  });

  it('Update or create a role (PUT /rbac/roles, key in the payload): 201 when created, 200 when replaced', async () => {
    const created = await form('put', '/rbac/roles', 'name=ops&comment=one');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ops', comment: 'one', is_default: false });
    const replaced = await form('put', '/rbac/roles', 'name=ops');
    expect(replaced.status).toBe(200);
    expect(replaced.body.id).toBe(created.body.id);
    expect(replaced.body.comment).toBeNull();
    const byId = await form('put', '/rbac/roles', `id=${created.body.id}&name=ops2&comment=renamed`);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: created.body.id, name: 'ops2', comment: 'renamed' });
  });

  it('PUT /rbac/roles/{name_or_id}: 201 when created, 200 when replaced', async () => {
    const created = await form('put', '/rbac/roles/qa', 'comment=testers');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'qa', comment: 'testers' });
    const replaced = await form('put', '/rbac/roles/qa', 'comment=again');
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: created.body.id, comment: 'again' });
  });

  it('Update a role (PATCH): 200, role object; is_default is immutable', async () => {
    const res = await form('patch', '/rbac/roles/dev', 'comment=devs');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'dev', comment: 'devs' });
    expect((await form('patch', '/rbac/roles/dev', 'is_default=true')).status).toBe(400);
    expect((await form('patch', '/rbac/roles/ghost', 'comment=x')).status).toBe(404);
  });

  it('Delete a role: 204 empty body, also when it does not exist', async () => {
    await form('post', '/rbac/roles', 'name=gone');
    const del = await h.http().delete('/rbac/roles/gone');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await h.http().get('/rbac/roles/gone')).status).toBe(404);
    expect((await h.http().delete('/rbac/roles/gone')).status).toBe(204);
  });
});

describe('role_endpoint permission', () => {
  it('Add: 201, permission object; actions sent comma-separated come back as an array', async () => {
    const res = await form('post', '/rbac/roles/dev/endpoints', 'workspace=default&endpoint=/services&negative=false&actions=read,create&comment=svc');
    expect(res.status).toBe(201);
    const role = (await h.http().get('/rbac/roles/dev')).body;
    expect(res.body).toEqual({
      role: { id: role.id },
      workspace: 'default',
      endpoint: '/services',
      actions: ['read', 'create'],
      negative: false,
      comment: 'svc',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
  });

  it('Add: workspace defaults to default, negative to false; the endpoint is normalised; * means all actions', async () => {
    const res = await form('post', '/rbac/roles/dev/endpoints', 'endpoint= consumers/ &actions=*');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ workspace: 'default', endpoint: '/consumers', negative: false });
    expect(res.body.actions.sort()).toEqual(['create', 'delete', 'read', 'update']);
  });

  it('Add: JSON array actions, wildcard endpoints and workspace *', async () => {
    const res = await h.http().post('/rbac/roles/dev/endpoints').send({ workspace: '*', endpoint: '/services/*/plugins/*', actions: ['read', 'delete'], negative: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ workspace: '*', endpoint: '/services/*/plugins/*', actions: ['read', 'delete'], negative: true });
    const lone = await form('post', '/rbac/roles/dev/endpoints', 'workspace=default&endpoint=*&actions=read');
    expect(lone.status).toBe(201);
    expect(lone.body.endpoint).toBe('*');
  });

  it('Add: bad input is a 4xx in Kong shape', async () => {
    const unknownAction = await form('post', '/rbac/roles/dev/endpoints', 'endpoint=/routes&actions=read,fly');
    expect(unknownAction.status).toBe(400);
    expect(unknownAction.body).toEqual({ message: 'Undefined RBAC action fly' });
    const noEndpoint = await form('post', '/rbac/roles/dev/endpoints', 'actions=read');
    expect(noEndpoint.status).toBe(400);
    expect(noEndpoint.body.fields).toEqual({ endpoint: 'required field missing' });
    const noActions = await form('post', '/rbac/roles/dev/endpoints', 'endpoint=/routes');
    expect(noActions.status).toBe(400);
    const dup = await form('post', '/rbac/roles/dev/endpoints', 'workspace=default&endpoint=/services&actions=read');
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ code: 3, name: 'primary key violation' });
    const ws = await form('post', '/rbac/roles/dev/endpoints', 'workspace=nowhere&endpoint=/routes&actions=read');
    expect(ws.status).toBe(404);
    expect(ws.body).toEqual({ message: 'Workspace nowhere does not exist' });
    expect((await form('post', '/rbac/roles/ghost/endpoints', 'endpoint=/x&actions=read')).status).toBe(404);
  });

  it('Retrieve: the endpoint is appended to the path with its own slashes and literal *', async () => {
    const one = await h.http().get('/rbac/roles/dev/endpoints/default/services');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ workspace: 'default', endpoint: '/services', actions: ['read', 'create'] });
    const deep = await h.http().get('/rbac/roles/dev/endpoints/*/services/*/plugins/*');
    expect(deep.status).toBe(200);
    expect(deep.body).toMatchObject({ workspace: '*', endpoint: '/services/*/plugins/*', negative: true });
    const lone = await h.http().get('/rbac/roles/dev/endpoints/default/*');
    expect(lone.status).toBe(200);
    expect(lone.body.endpoint).toBe('*');
    expect((await h.http().get('/rbac/roles/dev/endpoints/default/routes')).status).toBe(404);
    expect((await h.http().get('/rbac/roles/dev/endpoints/nowhere/services')).status).toBe(404);
  });

  it('List: 200, data array of permission objects', async () => {
    const res = await h.http().get('/rbac/roles/dev/endpoints');
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { endpoint: string }) => p.endpoint).sort()).toEqual(['*', '/consumers', '/services', '/services/*/plugins/*']);
  });

  it('Update: negative and actions; 200, permission object', async () => {
    const res = await form('patch', '/rbac/roles/dev/endpoints/default/services', 'negative=true&actions=delete');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ endpoint: '/services', negative: true, actions: ['delete'] });
    expect((await form('patch', '/rbac/roles/dev/endpoints/default/nothing', 'negative=true')).status).toBe(404);
  });

  it('Delete: 204 empty body', async () => {
    const res = await h.http().delete('/rbac/roles/dev/endpoints/default/consumers');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await h.http().get('/rbac/roles/dev/endpoints/default/consumers')).status).toBe(404);
  });
});

describe('role_entity permission', () => {
  let consumerId: string;
  beforeAll(async () => {
    consumerId = (await form('post', '/consumers', 'username=ent-consumer')).body.id;
  });

  it('Add: 201, permission object (actions, created_at, entity_id, entity_type, negative, role.id)', async () => {
    const res = await form('post', '/rbac/roles/dev/entities', `entity_id=${consumerId}&entity_type=consumers&actions=read,update&negative=false`);
    expect(res.status).toBe(201);
    const role = (await h.http().get('/rbac/roles/dev')).body;
    expect(res.body).toEqual({
      role: { id: role.id },
      entity_id: consumerId,
      entity_type: 'consumers',
      actions: ['read', 'update'],
      negative: false,
      comment: null,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
  });

  it('Add: entity_id * is stored with entity_type wildcard', async () => {
    const res = await form('post', '/rbac/roles/dev/entities', 'entity_id=*&entity_type=services&actions=read');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ entity_id: '*', entity_type: 'wildcard' });
  });

  it('Add: entity_id must be the id of an existing entity, or *', async () => {
    const missing = await form('post', '/rbac/roles/dev/entities', 'entity_id=0b4c5b47-9a5d-4f0e-8a3a-8d5f0f3b1c2d&entity_type=consumers&actions=read');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: "There is no entity of type 'consumers' with given entity_id" });
    const wrongType = await form('post', '/rbac/roles/dev/entities', `entity_id=${consumerId}&entity_type=services&actions=read`);
    expect(wrongType.status).toBe(400);
    const notUuid = await form('post', '/rbac/roles/dev/entities', 'entity_id=abc&entity_type=consumers&actions=read');
    expect(notUuid.status).toBe(400);
    expect(notUuid.body).toEqual({ message: 'abc is not a valid uuid' });
    const noType = await form('post', '/rbac/roles/dev/entities', `entity_id=${consumerId}&actions=read`);
    expect(noType.body).toEqual({ message: "Missing required parameter: 'entity_type'" });
    const noId = await form('post', '/rbac/roles/dev/entities', 'entity_type=consumers&actions=read');
    expect(noId.body).toEqual({ message: "Missing required parameter: 'entity_id'" });
    const dup = await form('post', '/rbac/roles/dev/entities', `entity_id=${consumerId}&entity_type=consumers&actions=read`);
    expect(dup.status).toBe(400);
    expect(dup.body.name).toBe('primary key violation');
  });

  it('Add: a workspace id is an entity (entity_type workspaces)', async () => {
    const ws = (await h.http().get('/workspaces/default')).body;
    const res = await form('post', '/rbac/roles/dev/entities', `entity_id=${ws.id}&entity_type=workspaces&actions=read`);
    expect(res.status).toBe(201);
  });

  it('Retrieve, List, Update, Delete', async () => {
    const one = await h.http().get(`/rbac/roles/dev/entities/${consumerId}`);
    expect(one.status).toBe(200);
    expect(one.body.entity_id).toBe(consumerId);
    const list = await h.http().get('/rbac/roles/dev/entities');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(3);
    const upd = await form('patch', `/rbac/roles/dev/entities/${consumerId}`, 'negative=true&actions=delete');
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ negative: true, actions: ['delete'] });
    const del = await h.http().delete(`/rbac/roles/dev/entities/${consumerId}`);
    expect(del.status).toBe(204);
    expect((await h.http().get(`/rbac/roles/dev/entities/${consumerId}`)).status).toBe(404);
    expect((await h.http().delete(`/rbac/roles/dev/entities/${consumerId}`)).status).toBe(204);
    expect((await h.http().get('/rbac/roles/dev/entities/not-a-uuid')).status).toBe(400);
  });
});

describe('Role permissions and user-role assignment', () => {
  it('List role permissions: endpoints (two-level map of {actions, negative}) and entities', async () => {
    const res = await h.http().get('/rbac/roles/read-only/permissions');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endpoints: { '*': { '*': { actions: ['read'], negative: false } } }, entities: { '*': { actions: ['read'], negative: false } } });
    const dev = await h.http().get('/rbac/roles/dev/permissions');
    expect(dev.body.endpoints.default['/default/services']).toEqual({ actions: ['delete'], negative: true });
    expect(dev.body.endpoints['*']['/*/services/*/plugins/*']).toEqual({ actions: ['read', 'delete'], negative: true });
    expect(dev.body.endpoints.default['*']).toEqual({ actions: ['read'], negative: false });
    const endpointsOnly = await h.http().get('/rbac/roles/dev/endpoints/permissions');
    expect(endpointsOnly.body).toEqual(dev.body.endpoints);
    const entitiesOnly = await h.http().get('/rbac/roles/dev/entities/permissions');
    expect(entitiesOnly.body).toEqual(dev.body.entities);
  });

  it('The admin role denies the RBAC interface; super-admin has everything', async () => {
    const admin = (await h.http().get('/rbac/roles/admin/permissions')).body;
    expect(admin.endpoints['*']['*']).toEqual({ actions: ['read', 'create', 'update', 'delete'], negative: false });
    expect(admin.endpoints['*']['/*/rbac/*']).toEqual({ actions: ['read', 'create', 'update', 'delete'], negative: true });
    const sa = (await h.http().get('/rbac/roles/super-admin/permissions')).body;
    expect(sa.endpoints).toEqual({ '*': { '*': { actions: ['read', 'create', 'update', 'delete'], negative: false } } });
  });

  it('Add a user to a role: 201, roles (array of role objects) and user', async () => {
    const res = await form('post', '/rbac/users/alice/roles', 'roles=read-only,dev');
    expect(res.status).toBe(201);
    expect(res.body.user.name).toBe('alice');
    expect(res.body.roles.map((r: { name: string }) => r.name).sort()).toEqual(['dev', 'read-only']);
    const unknown = await form('post', '/rbac/users/alice/roles', 'roles=nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ message: "role not found with name 'nope'" });
    expect((await form('post', '/rbac/users/alice/roles', 'roles=')).body).toEqual({ message: 'must provide >= 1 role' });
    expect((await form('post', '/rbac/users/alice/roles', 'roles=dev')).status).toBe(400);
    expect((await form('post', '/rbac/users/nobody/roles', 'roles=dev')).status).toBe(404);
  });

  it("List a user's roles: 200, roles and user", async () => {
    const res = await h.http().get('/rbac/users/alice/roles');
    expect(res.status).toBe(200);
    expect(res.body.user.name).toBe('alice');
    expect(res.body.roles.map((r: { name: string }) => r.name).sort()).toEqual(['dev', 'read-only']);
  });

  it("List a user's permissions: the merged map of its roles", async () => {
    const res = await h.http().get('/rbac/users/alice/permissions');
    expect(res.status).toBe(200);
    expect(res.body.endpoints['*']['*']).toEqual({ actions: ['read'], negative: false });
    expect(res.body.endpoints.default['/default/services']).toEqual({ actions: ['delete'], negative: true });
  });

  it('Delete a role from a user: 204, roles as comma-separated names', async () => {
    const res = await form('delete', '/rbac/users/alice/roles', 'roles=dev');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await h.http().get('/rbac/users/alice/roles');
    expect(after.body.roles.map((r: { name: string }) => r.name)).toEqual(['read-only']);
    expect((await form('delete', '/rbac/users/alice/roles', 'roles=')).status).toBe(400);
  });
});

describe('admins', () => {
  it('GET /admins lists admins; their RBAC users are not listed by GET /rbac/users', async () => {
    expect((await h.http().get('/admins')).body).toEqual({ data: [], next: null });
    const created = await form('post', '/admins', 'username=root-admin&email=root@example.test');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: 'root-admin', email: 'root@example.test', rbac_user: { id: expect.any(String) } });
    const admins = await h.http().get('/admins');
    expect(admins.body.data.map((a: { username: string }) => a.username)).toEqual(['root-admin']);
    const users = await h.http().get('/rbac/users');
    expect(users.body.data.map((u: { name: string }) => u.name)).not.toContain('root-admin');
    expect((await h.http().get('/rbac/users/root-admin')).body).toEqual({ message: 'Not found' });
    const roles = await form('post', '/admins/root-admin/roles', 'roles=admin');
    expect(roles.status).toBe(201);
    expect(roles.body.roles.map((r: { name: string }) => r.name)).toEqual(['admin']);
    expect((await h.http().delete('/admins/root-admin')).status).toBe(204);
    expect((await h.http().get('/admins')).body).toEqual({ data: [], next: null });
  });
});

describe('workspaces', () => {
  it('the default workspace exists; /workspaces CRUD', async () => {
    const list = await h.http().get('/workspaces');
    expect(list.body.data.map((w: { name: string }) => w.name)).toEqual(['default']);
    const created = await form('post', '/workspaces', 'name=team-a&comment=A');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'team-a', comment: 'A', config: {}, meta: {} });
    expect((await form('post', '/workspaces', 'name=team-a')).status).toBe(409);
    expect((await form('post', '/workspaces', 'name=services')).status).toBe(400);
    expect((await h.http().get('/workspaces/team-a')).body.id).toBe(created.body.id);
    expect((await form('patch', '/workspaces/team-a', 'comment=B')).body.comment).toBe('B');
    expect((await form('put', '/workspaces/team-b', 'comment=b')).status).toBe(201);
    expect((await form('put', '/workspaces/team-b', 'comment=bb')).status).toBe(200);
    expect((await h.http().delete('/workspaces/team-b')).status).toBe(204);
    expect((await h.http().delete('/workspaces/default')).status).toBe(400);
  });

  it('/{workspace}/... prefixes: roles live in their workspace; unknown workspace is 404', async () => {
    const role = await form('post', '/team-a/rbac/roles', 'name=dev');
    expect(role.status).toBe(201);
    expect(role.body.id).not.toBe((await h.http().get('/rbac/roles/dev')).body.id);
    const inTeam = await h.http().get('/team-a/rbac/roles');
    expect(inTeam.body.data.map((r: { name: string }) => r.name)).toEqual(['dev']);
    const perm = await form('post', '/team-a/rbac/roles/dev/endpoints', 'endpoint=/services&actions=read');
    expect(perm.body.workspace).toBe('team-a');
    const unknown = await h.http().get('/nowhere/services');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: "Workspace 'nowhere' not found" });
    expect((await h.http().get('/team-a/workspaces')).status).toBe(404);
    expect((await h.http().get('/default/rbac/roles/dev')).status).toBe(200);
  });

  it('a workspace with content cannot be deleted; a rename carries endpoint permissions along', async () => {
    expect((await h.http().delete('/workspaces/team-a')).status).toBe(400);
    expect((await form('patch', '/workspaces/team-a', 'name=team-z')).status).toBe(200);
    const perm = await h.http().get('/team-z/rbac/roles/dev/endpoints/team-z/services');
    expect(perm.status).toBe(200);
    expect((await h.http().delete('/team-z/rbac/roles/dev')).status).toBe(204);
    expect((await h.http().delete('/workspaces/team-z')).status).toBe(204);
  });

  it('entities created under a prefix are recorded in that workspace (a workspace id entity permission covers them)', async () => {
    const ws = (await form('post', '/workspaces', 'name=team-c')).body;
    const consumer = await form('post', '/team-c/consumers', 'username=in-team-c');
    expect(consumer.status).toBe(201);
    const { rows } = await h.database.db
      .selectFrom('workspace_entities')
      .selectAll()
      .where('entity_id', '=', consumer.body.id)
      .execute()
      .then((r) => ({ rows: r }));
    expect(rows).toEqual([{ entity_id: consumer.body.id, entity_type: 'consumers', ws_id: ws.id }]);
    expect((await h.http().delete('/workspaces/team-c')).status).toBe(400);
    await h.http().delete(`/consumers/${consumer.body.id}`);
    expect((await h.http().delete('/workspaces/team-c')).status).toBe(204);
  });
});

describe('methods', () => {
  it('wrong methods on RBAC paths are 405', async () => {
    expect((await h.http().put('/rbac/users')).status).toBe(405);
    expect((await h.http().post('/rbac/roles/dev/permissions')).status).toBe(405);
    expect((await h.http().put('/rbac/roles/dev/endpoints/default/services')).status).toBe(405);
  });
});
