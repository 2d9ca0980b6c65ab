/**
 * Entity-level RBAC (kong-reference Part B §3.4; interface.md "role_entity permission"): GATEHOUSE_ENFORCE_RBAC=both
 * and =entity. Entity permissions govern read/update/delete of the entities they name and filter listings; a
 * workspace id covers every entity in it, including future ones; `*` covers all; the creator owns what it creates.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

jest.setTimeout(60_000);

const BOOT = 'boot-token-entity-0123';
type Body = Record<string, unknown>;

function client(h: RbacHarness) {
  const as = (token: string) => ({
    get: (path: string) => h.http().get(path).set('Kong-Admin-Token', token),
    post: (path: string, body: Body = {}) => h.http().post(path).set('Kong-Admin-Token', token).send(body),
    patch: (path: string, body: Body = {}) => h.http().patch(path).set('Kong-Admin-Token', token).send(body),
    delete: (path: string) => h.http().delete(path).set('Kong-Admin-Token', token),
  });
  const ok = async <T extends { status: number; body: any }>(pending: PromiseLike<T>, status: number): Promise<T> => {
    const res = await pending;
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return res;
  };
  const boot = () => as(BOOT);
  const user = async (name: string, token: string, roles: string[]) => {
    await ok(boot().post('/rbac/users', { name, user_token: token }), 201);
    if (roles.length) await ok(boot().post(`/rbac/users/${name}/roles`, { roles: roles.join(',') }), 201);
  };
  const role = async (name: string, endpoints: Body[], entities: Body[]) => {
    await ok(boot().post('/rbac/roles', { name }), 201);
    for (const e of endpoints) await ok(boot().post(`/rbac/roles/${name}/endpoints`, e), 201);
    for (const e of entities) await ok(boot().post(`/rbac/roles/${name}/entities`, e), 201);
  };
  return { as, ok, boot, user, role };
}

const ALL_ENDPOINTS = { workspace: '*', endpoint: '*', actions: '*' };

describe('GATEHOUSE_ENFORCE_RBAC=both', () => {
  let h: RbacHarness;
  let t: ReturnType<typeof client>;
  let c1: string;
  let c2: string;
  let inWs1: string;
  let ws1Id: string;

  beforeAll(async () => {
    h = await startRbacAdmin({ mode: 'both', adminToken: BOOT });
    t = client(h);
    const { ok, boot, role, user } = t;
    ws1Id = (await ok(boot().post('/workspaces', { name: 'ws1' }), 201)).body.id;
    c1 = (await ok(boot().post('/consumers', { username: 'c1' }), 201)).body.id;
    c2 = (await ok(boot().post('/consumers', { username: 'c2' }), 201)).body.id;
    inWs1 = (await ok(boot().post('/ws1/consumers', { username: 'in-ws1' }), 201)).body.id;
    await role('one-consumer', [ALL_ENDPOINTS], [{ entity_id: c1, entity_type: 'consumers', actions: 'read' }]);
    await user('ent', 'ent-token', ['one-consumer']);
    await role('ws1-entities', [ALL_ENDPOINTS], [{ entity_id: ws1Id, entity_type: 'workspaces', actions: 'read' }]);
    await user('entws', 'entws-token', ['ws1-entities']);
    await role('endpoints-only', [ALL_ENDPOINTS], []);
    await user('maker', 'maker-token', ['endpoints-only']);
    await role('entities-only', [], [{ entity_id: '*', actions: '*' }]);
    await user('noendpoint', 'noendpoint-token', ['entities-only']);
    await role('all-but-c2', [ALL_ENDPOINTS], [
      { entity_id: '*', actions: '*' },
      { entity_id: c2, entity_type: 'consumers', actions: 'delete,update', negative: true },
    ]);
    await user('most', 'most-token', ['all-but-c2']);
    await user('ro', 'ro-token', ['read-only']);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('an entity permission governs reads, updates and deletes of that entity; others are 403', async () => {
    const { as } = t;
    expect((await as('ent-token').get('/consumers/c1')).status).toBe(200);
    expect((await as('ent-token').get(`/consumers/${c1}`)).status).toBe(200);
    const other = await as('ent-token').get('/consumers/c2');
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: 'ent, you do not have permissions to read this resource' });
    const update = await as('ent-token').patch('/consumers/c1', { custom_id: 'x' });
    expect(update.status).toBe(403);
    expect(update.body).toEqual({ message: 'ent, you do not have permissions to update this resource' });
    expect((await as('ent-token').delete(`/consumers/${c1}`)).status).toBe(403);
  });

  it('listings quietly leave out what may not be read', async () => {
    const { as, ok, boot } = t;
    const res = await ok(as('ent-token').get('/consumers'), 200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([c1]);
    const all = await ok(boot().get('/consumers'), 200);
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining([c1, c2, inWs1]));
  });

  it('a workspace id covers every entity in that workspace, including ones created later', async () => {
    const { as, ok, boot } = t;
    expect((await as('entws-token').get(`/consumers/${inWs1}`)).status).toBe(200);
    expect((await as('entws-token').get(`/consumers/${c2}`)).status).toBe(403);
    const later = (await ok(boot().post('/ws1/consumers', { username: 'later-in-ws1' }), 201)).body.id;
    expect((await as('entws-token').get(`/consumers/${later}`)).status).toBe(200);
    const list = await ok(as('entws-token').get('/consumers'), 200);
    expect(list.body.data.map((c: { id: string }) => c.id).sort()).toEqual([inWs1, later].sort());
  });

  it('* covers every entity; a negative entity rule beats it for that entity', async () => {
    const { as } = t;
    expect((await as('most-token').patch('/consumers/c1', { custom_id: 'c1-custom' })).status).toBe(200);
    expect((await as('most-token').get('/consumers/c2')).status).toBe(200);
    expect((await as('most-token').patch('/consumers/c2', { custom_id: 'nope' })).status).toBe(403);
    expect((await as('most-token').delete('/consumers/c2')).status).toBe(403);
  });

  it('nested paths check the parent too: /consumers/{c}/plugins needs read on c', async () => {
    const { as } = t;
    expect((await as('ent-token').get('/consumers/c1/plugins')).status).toBe(200);
    expect((await as('ent-token').get('/consumers/c2/plugins')).status).toBe(403);
  });

  it('the creator owns what it creates (granted to its default role)', async () => {
    const { as, ok, boot } = t;
    const made = await ok(as('maker-token').post('/consumers', { username: 'made-by-maker' }), 201);
    expect((await as('maker-token').get(`/consumers/${made.body.id}`)).status).toBe(200);
    expect((await as('maker-token').patch(`/consumers/${made.body.id}`, { custom_id: 'mine' })).status).toBe(200);
    expect((await as('maker-token').get('/consumers/c1')).status).toBe(403);
    const perms = await ok(boot().get('/rbac/users/maker/permissions'), 200);
    expect(perms.body.entities[made.body.id]).toEqual({ actions: ['read', 'create', 'update', 'delete'], negative: false });
  });

  it('the endpoint check comes first: entity permissions alone are not enough', async () => {
    const res = await t.as('noendpoint-token').get(`/consumers/${c1}`);
    expect(res.status).toBe(403);
  });

  it('RBAC entities are entities too: roles and users are filtered by entity rules', async () => {
    const { as, ok } = t;
    const roles = await ok(as('ro-token').get('/rbac/roles'), 200);
    expect(roles.body.data.length).toBeGreaterThanOrEqual(3);
    const hidden = await ok(as('ent-token').get('/rbac/roles'), 200);
    expect(hidden.body.data).toEqual([]);
    expect((await as('ent-token').get('/rbac/roles/read-only')).status).toBe(403);
  });
});

describe('GATEHOUSE_ENFORCE_RBAC=entity', () => {
  let h: RbacHarness;
  let t: ReturnType<typeof client>;
  let c1: string;

  beforeAll(async () => {
    h = await startRbacAdmin({ mode: 'entity', adminToken: BOOT });
    t = client(h);
    const { ok, boot, role, user } = t;
    c1 = (await ok(boot().post('/consumers', { username: 'c1' }), 201)).body.id;
    await ok(boot().post('/consumers', { username: 'c2' }), 201);
    await role('entity-reader', [], [{ entity_id: c1, entity_type: 'consumers', actions: 'read' }]);
    await user('er', 'er-token', ['entity-reader']);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('a valid token is still required', async () => {
    const res = await h.http().get('/consumers');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid RBAC credentials' });
  });

  it('no endpoint rule is needed; entity rules alone decide', async () => {
    const { as, ok } = t;
    expect((await as('er-token').get(`/consumers/${c1}`)).status).toBe(200);
    expect((await as('er-token').get('/consumers/c2')).status).toBe(403);
    const list = await ok(as('er-token').get('/consumers'), 200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([c1]);
  });

  it('listing pages hold only readable rows: full pages of size N and a right `next` until the last', async () => {
    const { as, ok, boot, role, user } = t;
    const made: string[] = [];
    for (let i = 0; i < 9; i++) made.push((await ok(boot().post('/consumers', { username: `paged-${i}` }), 201)).body.id);
    // every third consumer in id order is not granted, so readable rows are interleaved with hidden ones
    const allowed = [...made].sort().filter((_, i) => i % 3 !== 1);
    await role('some-consumers', [], allowed.map((id) => ({ entity_id: id, entity_type: 'consumers', actions: 'read' })));
    await user('pager', 'pager-token', ['some-consumers']);

    const pages: string[][] = [];
    let next: string | null = '/consumers?size=2';
    while (next !== null) {
      const page: { body: { data: { id: string }[]; next: string | null } } = await ok(as('pager-token').get(next), 200);
      pages.push(page.body.data.map((c) => c.id));
      next = page.body.next;
      expect(pages.length).toBeLessThanOrEqual(allowed.length);
    }
    const seen = pages.flat();
    expect(seen.sort()).toEqual([...allowed].sort());
    expect(new Set(seen).size).toBe(seen.length);
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(2);
    expect(pages[pages.length - 1]!.length).toBeGreaterThan(0);
  });

  it('entity RBAC does not govern creation', async () => {
    expect((await t.as('er-token').post('/consumers', { username: 'er-made' })).status).toBe(201);
  });
});
