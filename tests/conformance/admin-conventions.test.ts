import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/** kong-reference Part A §4 (decisions first): one test per admin convention, over a throwaway Postgres database. */
let admin: AdminHarness;
beforeAll(async () => {
  admin = await startAdmin('postgres');
});
afterAll(async () => {
  await admin?.close();
});
const http = () => admin.http();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function service(name: string) {
  const res = await http().post('/services').send({ name, url: `http://${name}.upstream.test` });
  expect(res.status).toBe(201);
  return res.body as { id: string; name: string };
}

describe('request encodings', () => {
  it('JSON bodies are taken as they are', async () => {
    const res = await http().post('/services').send({ name: 'enc-json', host: 'h.test', port: 8080, enabled: false });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ host: 'h.test', port: 8080, enabled: false });
  });

  it('form fields are coerced by the schema: numbers, booleans, dotted keys', async () => {
    const res = await http().post('/services').type('form').send('name=enc-form&host=h.test&port=8443&protocol=https&enabled=false&retries=2');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ port: 8443, protocol: 'https', enabled: false, retries: 2 });
  });

  it('arrays from paths[], paths[1]/paths[2], repeated keys, and a single value', async () => {
    await service('enc-arrays');
    const forms = {
      'paths[]=/a&paths[]=/b': ['/a', '/b'],
      'paths[2]=/b&paths[1]=/a': ['/a', '/b'],
      'paths=/a&paths=/b': ['/a', '/b'],
      'paths=/only': ['/only'],
    };
    for (const [form, paths] of Object.entries(forms)) {
      const res = await http().post('/services/enc-arrays/routes').type('form').send(form);
      expect(res.status).toBe(201);
      expect(res.body.paths).toEqual(paths);
    }
  });

  it('multipart/form-data fields are decoded like form fields', async () => {
    const res = await http().post('/services').field('name', 'enc-multipart').field('url', 'http://mp.test:81/x').field('tags[1]', 'a').field('tags[2]', 'b');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'enc-multipart', host: 'mp.test', port: 81, path: '/x', tags: ['a', 'b'] });
  });

  it('an empty form value becomes null', async () => {
    const created = await http().post('/consumers').type('form').send({ username: 'empty-null', custom_id: 'c-1' });
    expect(created.body.custom_id).toBe('c-1');
    const patched = await http().patch('/consumers/empty-null').type('form').send({ custom_id: '' });
    expect(patched.status).toBe(200);
    expect(patched.body.custom_id).toBeNull();
  });

  it('other content types with a body are refused with 415, and so is a body without a content type', async () => {
    const before = (await http().get('/status')).body.config_version;
    const res = await http().post('/consumers').set('Content-Type', 'text/plain').send('username=x');
    expect(res.status).toBe(415);
    const raw = await http().post('/consumers').set('Content-Type', '').send(Buffer.from('username=x'));
    expect(raw.status).toBe(415);
    expect((await http().get('/status')).body.config_version).toBe(before);
  });

  it('unparsable or empty JSON gives 400 Cannot parse JSON body', async () => {
    const bad = await http().post('/consumers').set('Content-Type', 'application/json').send('{"username":');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Cannot parse JSON body' });
    const empty = await http().post('/consumers').set('Content-Type', 'application/json');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'Cannot parse JSON body' });
  });

  it('a body over the size limit gives 413 with a message', async () => {
    const res = await http()
      .post('/consumers')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ username: 'x'.repeat(11 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(typeof res.body.message).toBe('string');
  });
});

describe('statuses and error bodies', () => {
  it('201 on create, 200 on read and update, 204 on delete', async () => {
    const created = await http().post('/consumers').send({ username: 'status-codes' });
    expect(created.status).toBe(201);
    expect((await http().get('/consumers/status-codes')).status).toBe(200);
    expect((await http().patch('/consumers/status-codes').send({ custom_id: 's' })).status).toBe(200);
    const deleted = await http().delete('/consumers/status-codes');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
  });

  it('a missing required field and an entity check are schema violations (code 2)', async () => {
    const res = await http().post('/consumers').send({});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 2,
      name: 'schema violation',
      message: "schema violation (at least one of these fields must be non-empty: 'custom_id', 'username')",
      fields: { '@entity': ["at least one of these fields must be non-empty: 'custom_id', 'username'"] },
    });
    const plugin = await http().post('/plugins').send({});
    expect(plugin.body).toMatchObject({ code: 2, fields: { name: 'required field missing' } });
  });

  it('an unknown field is refused', async () => {
    const res = await http().post('/consumers').send({ username: 'unknown-field', foo: 'bar' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 2, name: 'schema violation', message: 'schema violation (foo: unknown field)', fields: { foo: 'unknown field' } });
    expect((await http().get('/consumers/unknown-field')).status).toBe(404);
  });

  it('wrong types are schema violations, never 500', async () => {
    const res = await http().post('/services').send({ name: 'types', host: 'h', port: 'eighty', retries: true });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(2);
    expect(Object.keys(res.body.fields).sort()).toEqual(['port', 'retries']);
    const nested = await http().post('/routes').send({ paths: '/not-an-array', hosts: [1] });
    expect(nested.status).toBe(400);
  });

  it('an invalid UUID in a body or a reference is a 400 with Kong body', async () => {
    const res = await http().post('/routes').send({ paths: ['/bad-uuid'], service: { id: 'not-a-uuid' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 2, fields: { service: { id: 'expected a valid UUID' } } });
    const id = await http().post('/consumers').send({ id: '1234', username: 'bad-id' });
    expect(id.status).toBe(400);
    expect(id.body.fields.id).toBe('expected a valid UUID');
  });

  it('a unique violation is a 409 naming the value', async () => {
    await http().post('/consumers').send({ username: 'twice' });
    const res = await http().post('/consumers').send({ username: 'twice' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      code: 5,
      name: 'unique constraint violation',
      message: `UNIQUE violation detected on '{username="twice"}'`,
      fields: { username: 'twice' },
    });
  });

  it('a reference to a missing entity is a foreign key violation (code 4)', async () => {
    const missing = '0e5d3c4b-aaaa-4bbb-8ccc-000000000001';
    const res = await http().post('/routes').send({ paths: ['/fk'], service: { id: missing } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 4,
      name: 'foreign key violation',
      message: `the foreign key '{id="${missing}"}' does not reference an existing 'services' entity.`,
      fields: { service: { id: missing } },
    });
  });

  it('404 {"message":"Not found"} for unknown paths and absent entities; 405 for other methods', async () => {
    expect((await http().get('/no-such-thing')).body).toEqual({ message: 'Not found' });
    const absent = await http().get('/consumers/nobody-here');
    expect(absent.status).toBe(404);
    expect(absent.body).toEqual({ message: 'Not found' });
    expect((await http().get('/consumers/0e5d3c4b-aaaa-4bbb-8ccc-000000000009')).status).toBe(404);
    expect((await http().patch('/consumers/nobody-here').send({ custom_id: 'x' })).status).toBe(404);
    const wrong = await http().post('/consumers/anyone');
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual({ message: 'Method not allowed' });
    expect((await http().delete('/consumers')).status).toBe(405);
  });

  it('a top-level DELETE of an absent entity is 204, a nested one is 404', async () => {
    expect((await http().delete('/consumers/never-existed')).status).toBe(204);
    await http().post('/consumers').send({ username: 'nested-delete' });
    expect((await http().delete('/consumers/nested-delete/key-auth/no-such-key')).status).toBe(404);
    expect((await http().delete('/consumers/nobody/key-auth/no-such-key')).status).toBe(404);
  });
});

describe('pagination', () => {
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) await http().post('/consumers').send({ username: `pager-${i}`, tags: ['pager'] });
  });

  it('pages with size, an opaque offset and a next link that keeps size and tags', async () => {
    const names: string[] = [];
    let url: string | null = '/consumers?size=3&tags=pager';
    let pages = 0;
    while (url) {
      const res = await http().get(url);
      expect(res.status).toBe(200);
      pages++;
      names.push(...res.body.data.map((c: { username: string }) => c.username));
      if (res.body.next) {
        expect(typeof res.body.offset).toBe('string');
        expect(res.body.next).toBe(`/consumers?offset=${encodeURIComponent(res.body.offset)}&size=3&tags=pager`);
      } else {
        expect(res.body.next).toBeNull();
        expect(res.body).not.toHaveProperty('offset');
      }
      url = res.body.next;
    }
    expect(pages).toBe(3);
    expect(names.sort()).toEqual(['pager-0', 'pager-1', 'pager-2', 'pager-3', 'pager-4', 'pager-5', 'pager-6']);
  });

  it('consumers can be filtered by custom_id', async () => {
    await http().post('/consumers').send({ username: 'filtered', custom_id: 'cid-42' });
    const res = await http().get('/consumers?custom_id=cid-42');
    expect(res.body.data.map((c: { username: string }) => c.username)).toEqual(['filtered']);
    expect((await http().get('/consumers?custom_id=none')).body).toEqual({ data: [], next: null });
  });

  it('an empty collection is {"data":[],"next":null}', async () => {
    const res = await http().get('/consumers?tags=no-such-tag');
    expect(res.body).toEqual({ data: [], next: null });
  });

  it('size outside 1..1000 or not an integer is 400 invalid size; a bad offset is 400 invalid offset', async () => {
    for (const size of ['0', '1001', 'abc', '1.5']) {
      const res = await http().get(`/consumers?size=${size}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 9, name: 'invalid size', message: 'size must be an integer between 1 and 1000' });
    }
    const offset = await http().get('/consumers?offset=not*base64');
    expect(offset.status).toBe(400);
    expect(offset.body).toMatchObject({ code: 7, name: 'invalid offset' });
    const wellFormed = await http().get(`/consumers?offset=${Buffer.from('["x"]').toString('base64')}`);
    expect(wellFormed.status).toBe(400);
  });

  it('nested lists page the same way', async () => {
    await service('nested-pages');
    for (let i = 0; i < 3; i++) await http().post('/services/nested-pages/routes').send({ paths: [`/np${i}`] });
    const first = await http().get('/services/nested-pages/routes?size=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.next).toMatch(/^\/services\/nested-pages\/routes\?offset=/);
    const second = await http().get(first.body.next);
    expect(second.body.data).toHaveLength(1);
  });
});

describe('PUT upsert and lookups', () => {
  it('PUT by endpoint key creates, then replaces the whole entity with the key forced to the URL', async () => {
    const created = await http().put('/consumers/upsert-bob').send({ username: 'ignored', custom_id: 'first' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ username: 'upsert-bob', custom_id: 'first' });
    const replaced = await http().put('/consumers/upsert-bob').send({});
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: created.body.id, username: 'upsert-bob', custom_id: null });
  });

  it('PUT by id creates with that id, then replaces', async () => {
    const id = '3f1d2c3b-4a5b-4c6d-8e7f-8091a2b3c4d5';
    const created = await http().put(`/services/${id}`).send({ name: 'put-by-id', url: 'http://a.test' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ id, name: 'put-by-id', host: 'a.test' });
    const replaced = await http().put(`/services/${id}`).send({ host: 'b.test' });
    expect(replaced.body).toMatchObject({ id, name: null, host: 'b.test', port: 80 });
  });

  it('a UUID path segment is looked up by id only, anything else by endpoint key', async () => {
    const consumer = await http().post('/consumers').send({ username: 'lookup-me' });
    expect((await http().get(`/consumers/${consumer.body.id}`)).body.username).toBe('lookup-me');
    expect((await http().get('/consumers/lookup-me')).body.id).toBe(consumer.body.id);
    const named = await http().post('/consumers').send({ username: 'name with spaces/é' });
    expect((await http().get(`/consumers/${encodeURIComponent('name with spaces/é')}`)).body.id).toBe(named.body.id);
  });

  it('an entity reads back exactly as it was returned when written, key order included', async () => {
    const created = await http().post('/plugins').send({ name: 'key-auth', instance_name: 'read-back', tags: ['rb'] });
    const read = await http().get('/plugins/read-back');
    expect(read.text).toBe(created.text);
  });

  it('PATCH merges into the stored entity and validates the result', async () => {
    await service('patch-svc');
    const res = await http().patch('/services/patch-svc').send({ port: 9090 });
    expect(res.body).toMatchObject({ name: 'patch-svc', host: 'patch-svc.upstream.test', port: 9090 });
    const bad = await http().patch('/services/patch-svc').send({ port: 70000 });
    expect(bad.status).toBe(400);
    expect((await http().get('/services/patch-svc')).body.port).toBe(9090);
  });
});

describe('tags', () => {
  beforeAll(async () => {
    await http().post('/consumers').send({ username: 'tag-a', tags: ['t-red', 't-big'] });
    await http().post('/consumers').send({ username: 'tag-b', tags: ['t-red'] });
    await http().post('/consumers').send({ username: 'tag-c', tags: ['t-blue'] });
  });

  it('?tags=a,b means all of them, ?tags=a/b any of them', async () => {
    const all = await http().get('/consumers?tags=t-red,t-big');
    expect(all.body.data.map((c: { username: string }) => c.username)).toEqual(['tag-a']);
    const any = await http().get('/consumers?tags=t-big/t-blue');
    expect(any.body.data.map((c: { username: string }) => c.username).sort()).toEqual(['tag-a', 'tag-c']);
  });

  it('mixing , and / or an empty tags value is 400 invalid options', async () => {
    const mixed = await http().get('/consumers?tags=a,b/c');
    expect(mixed.status).toBe(400);
    expect(mixed.body).toMatchObject({ code: 11, message: 'invalid option (tags: invalid filter syntax)' });
    const empty = await http().get('/consumers?tags=');
    expect(empty.body).toMatchObject({ code: 11, message: 'invalid option (tags: cannot be null)' });
  });

  it('GET /tags and GET /tags/{tag} list entity_name, entity_id, tag', async () => {
    const red = await http().get('/tags/t-red');
    expect(red.status).toBe(200);
    expect(red.body.data).toHaveLength(2);
    for (const row of red.body.data) expect(row).toEqual({ entity_name: 'consumers', entity_id: expect.stringMatching(UUID), tag: 't-red' });
    const all = await http().get('/tags?size=1');
    expect(all.body.data).toHaveLength(1);
    expect(all.body.next).toMatch(/^\/tags\?offset=.+&size=1$/);
    const next = await http().get(all.body.next);
    expect(next.status).toBe(200);
    expect(next.body.data[0]).not.toEqual(all.body.data[0]);
  });
});

describe('plugins', () => {
  it('config is validated by the named plugin, with errors under fields.config and defaults filled', async () => {
    const bad = await http().post('/plugins').send({ name: 'key-auth', config: { key_names: ['bad name'], hide_credentials: 'maybe' } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.config).toHaveProperty('key_names');
    expect(bad.body.fields.config).toHaveProperty('hide_credentials');
    await service('plugin-defaults');
    const good = await http().post('/services/plugin-defaults/plugins').type('form').send({ name: 'key-auth', 'config.key_names[1]': 'x-key' });
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({
      name: 'key-auth',
      instance_name: null,
      route: null,
      consumer: null,
      protocols: ['grpc', 'grpcs', 'http', 'https'],
      enabled: true,
      tags: null,
      config: { key_names: ['x-key'], hide_credentials: false, anonymous: null, key_in_header: true, key_in_query: true, key_in_body: false, run_on_preflight: true, realm: null },
    });
  });

  it('an unknown plugin name is refused', async () => {
    const res = await http().post('/plugins').type('form').send({ name: 'no-such-plugin' });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual({ name: "plugin 'no-such-plugin' not enabled; add it to the 'plugins' configuration property" });
  });

  it('one config per (name, route, service, consumer): a second is 409', async () => {
    const svc = await service('plugin-unique');
    expect((await http().post('/services/plugin-unique/plugins').send({ name: 'key-auth' })).status).toBe(201);
    const res = await http().post('/services/plugin-unique/plugins').send({ name: 'key-auth' });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe(`UNIQUE violation detected on '{consumer=null,name="key-auth",route=null,service={id="${svc.id}"}}'`);
    const global = await http().post('/plugins').send({ name: 'request-termination' });
    expect(global.status).toBe(201);
    expect((await http().post('/plugins').send({ name: 'request-termination' })).status).toBe(409);
  });

  it('places plugin config checks where Kong does: entity checks at the top, record checks on config', async () => {
    await service('plugin-checks');
    const acl = await http().post('/services/plugin-checks/plugins').type('form').send({ name: 'acl' });
    expect(acl.status).toBe(400);
    expect(acl.body.fields['@entity']).toContain("exactly one of these fields must be non-empty: 'config.allow', 'config.deny'");
    expect(acl.body.fields.config).toBeUndefined();
    expect(acl.body.message).toContain("exactly one of these fields must be non-empty: 'config.allow', 'config.deny'");
    const termination = await http()
      .post('/services/plugin-checks/plugins')
      .type('form')
      .send({ name: 'request-termination', 'config.message': 'm', 'config.body': 'b', 'config.content_type': 'text/plain' });
    expect(termination.status).toBe(400);
    expect(termination.body.fields).toEqual({ config: 'message cannot be used with content_type or body' });
    expect(termination.body.message).toBe('schema violation (config: message cannot be used with content_type or body)');
  });

  it('authentication plugins are refused on a consumer; other plugins are accepted there', async () => {
    await http().post('/consumers').send({ username: 'scoped' });
    const res = await http().post('/consumers/scoped/plugins').type('form').send({ name: 'key-auth' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 2, fields: { consumer: 'value must be null' } });
    const other = await http().post('/consumers/scoped/plugins').type('form').send({ name: 'request-termination', 'config.status_code': '429' });
    expect(other.status).toBe(201);
    expect(other.body.config.status_code).toBe(429);
  });

  it('the plugin list is reachable at every scope', async () => {
    const svc = await service('plugin-scopes');
    const route = await http().post('/services/plugin-scopes/routes').send({ paths: ['/scopes'] });
    await http().post(`/routes/${route.body.id}/plugins`).send({ name: 'key-auth' });
    const byRoute = await http().get(`/routes/${route.body.id}/plugins`);
    expect(byRoute.body.data).toHaveLength(1);
    expect((await http().get(`/services/${svc.id}/plugins`)).body.data).toHaveLength(0);
    const plugin = byRoute.body.data[0];
    expect((await http().get(`/plugins/${plugin.id}/route`)).body.id).toBe(route.body.id);
  });
});

describe('key-auth credentials', () => {
  it('POST /consumers/{c}/key-auth generates a 32-character key; the key is an endpoint key', async () => {
    const consumer = await http().post('/consumers').send({ username: 'key-owner' });
    const created = await http().post('/consumers/key-owner/key-auth').type('form').send({});
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(created.body.consumer).toEqual({ id: consumer.body.id });
    const given = await http().post('/consumers/key-owner/key-auth').type('form').send({ key: 'my-own-key' });
    expect(given.body.key).toBe('my-own-key');
    expect((await http().get('/key-auths/my-own-key')).body.id).toBe(given.body.id);
    expect((await http().get('/consumers/key-owner/key-auth/my-own-key')).body.id).toBe(given.body.id);
    expect((await http().get('/key-auths/my-own-key/consumer')).body.username).toBe('key-owner');
    const listed = await http().get('/consumers/key-owner/key-auth');
    expect(listed.body.data).toHaveLength(2);
    expect((await http().post('/consumers/key-owner/key-auth').send({ key: 'my-own-key' })).status).toBe(409);
  });

  it('a credential is only reachable under its own consumer', async () => {
    await http().post('/consumers').send({ username: 'other-owner' });
    expect((await http().get('/consumers/other-owner/key-auth/my-own-key')).status).toBe(404);
  });
});

describe('cascades', () => {
  it('deleting a consumer deletes its credentials and consumer-scoped plugins', async () => {
    await http().post('/consumers').send({ username: 'doomed' });
    const key = await http().post('/consumers/doomed/key-auth').send({});
    const plugin = await http().post('/consumers/doomed/plugins').send({ name: 'request-termination' });
    expect(plugin.status).toBe(201);
    expect((await http().delete('/consumers/doomed')).status).toBe(204);
    expect((await http().get(`/key-auths/${key.body.id}`)).status).toBe(404);
    expect((await http().get(`/plugins/${plugin.body.id}`)).status).toBe(404);
  });

  it('deleting a route or a service deletes the plugins scoped to it', async () => {
    await service('cascade-svc');
    const route = await http().post('/services/cascade-svc/routes').send({ paths: ['/cascade'] });
    const routePlugin = await http().post(`/routes/${route.body.id}/plugins`).send({ name: 'key-auth' });
    const servicePlugin = await http().post('/services/cascade-svc/plugins').send({ name: 'key-auth' });
    expect((await http().delete(`/routes/${route.body.id}`)).status).toBe(204);
    expect((await http().get(`/plugins/${routePlugin.body.id}`)).status).toBe(404);
    expect((await http().delete('/services/cascade-svc')).status).toBe(204);
    expect((await http().get(`/plugins/${servicePlugin.body.id}`)).status).toBe(404);
  });

  it('a service still used by a route cannot be deleted', async () => {
    await service('restricted');
    await http().post('/services/restricted/routes').send({ paths: ['/restricted'] });
    const res = await http().delete('/services/restricted');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 4,
      name: 'foreign key violation',
      message: "an existing 'routes' entity references this 'services' entity",
      fields: { '@referenced_by': 'routes' },
    });
    expect((await http().get('/services/restricted')).status).toBe(200);
  });
});

describe('transactions', () => {
  it('a write failing halfway leaves nothing behind and does not bump the version', async () => {
    // the legacy API writes a service, then a route of the same name: a taken route name fails the second step
    await service('half-svc');
    await http().post('/services/half-svc/routes').send({ name: 'taken-name', paths: ['/taken'] });
    const before = (await http().get('/status')).body.config_version;
    const committedBefore = admin.committed.length;
    const res = await http().post('/apis').send({ name: 'taken-name', uris: ['/t'], upstream_url: 'http://t.test' });
    expect(res.status).toBe(409);
    expect((await http().get('/services/taken-name')).status).toBe(404);
    expect((await http().get('/apis/taken-name')).status).toBe(404);
    expect((await http().get('/status')).body.config_version).toBe(before);
    expect(admin.committed.length).toBe(committedBefore);
  });

  it('every successful write bumps the version exactly once', async () => {
    const before = (await http().get('/status')).body.config_version;
    await http().post('/consumers').send({ username: 'version-bump' });
    await http().patch('/consumers/version-bump').send({ custom_id: 'v' });
    await http().delete('/consumers/version-bump');
    await http().delete('/consumers/version-bump');
    expect((await http().get('/status')).body.config_version).toBe(before + 3);
  });
});

describe('CORS and headers', () => {
  it('answers OPTIONS with 204 and Allow; CORS headers only for a listed origin (see admin-cors.test.ts)', async () => {
    const res = await http().options('/consumers');
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // no GATEHOUSE_ADMIN_GUI_ORIGINS here: no origin is listed, and a preflight from one is refused (decision 27)
    const preflight = await http().options('/consumers').set('Origin', 'http://manager.test').set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('always sends X-Kong-Admin-Latency', async () => {
    const res = await http().get('/consumers').set('Origin', 'http://manager.test');
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['x-kong-admin-latency']).toMatch(/^\d+$/);
    expect((await http().get('/nope')).headers['x-kong-admin-latency']).toMatch(/^\d+$/);
  });
});

describe('node information', () => {
  it('GET / carries Kong fields', async () => {
    const res = await http().get('/');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ edition: 'community', tagline: 'Welcome to gatehouse', configuration: { database: 'postgres' } });
    expect(res.body.node_id).toMatch(UUID);
    expect(typeof res.body.version).toBe('string');
    expect(typeof res.body.hostname).toBe('string');
    expect(res.body.configuration.role).toBe('traditional');
    expect(Array.isArray(res.body.configuration.admin_listen)).toBe(true);
    expect(Array.isArray(res.body.configuration.proxy_listeners)).toBe(true);
    expect(res.body.plugins.available_on_server['key-auth']).toEqual({ version: expect.any(String), priority: 1250 });
    expect(res.body.plugins.enabled_in_cluster).toContain('key-auth');
  });

  it('GET /status reports the database and the config version', async () => {
    const res = await http().get('/status');
    expect(res.body.database).toEqual({ reachable: true });
    expect(Number.isInteger(res.body.config_version)).toBe(true);
    expect(res.body.server).toHaveProperty('total_requests');
  });
});

describe('schemas and OpenAPI', () => {
  it('GET /schemas/{entity} is Kong\'s fields array', async () => {
    const res = await http().get('/schemas/routes');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.fields)).toBe(true);
    for (const field of res.body.fields) expect(Object.keys(field)).toHaveLength(1);
    const strip = res.body.fields.find((f: Record<string, unknown>) => 'strip_path' in f);
    expect(strip.strip_path).toMatchObject({ type: 'boolean', default: true });
    const svc = res.body.fields.find((f: Record<string, unknown>) => 'service' in f);
    expect(svc.service).toMatchObject({ type: 'foreign', reference: 'services' });
    expect((await http().get('/schemas/no-such-entity')).status).toBe(404);
  });

  it('GET /schemas/plugins/{name} has a config record', async () => {
    const res = await http().get('/schemas/plugins/key-auth');
    expect(res.status).toBe(200);
    const config = res.body.fields.find((f: Record<string, unknown>) => 'config' in f).config;
    expect(config.type).toBe('record');
    const keyNames = config.fields.find((f: Record<string, unknown>) => 'key_names' in f);
    expect(keyNames.key_names.default).toEqual(['apikey']);
    expect((await http().get('/schemas/plugins/no-such-plugin')).status).toBe(404);
  });

  it('POST /schemas/{entity}/validate and /schemas/plugins/validate check without writing', async () => {
    const ok = await http().post('/schemas/consumers/validate').send({ username: 'dry-run' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: 'schema validation successful' });
    expect((await http().get('/consumers/dry-run')).status).toBe(404);
    const bad = await http().post('/schemas/consumers/validate').send({});
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(2);
    const plugin = await http().post('/schemas/plugins/validate').type('form').send({ name: 'key-auth', 'config.key_names': 'bad name' });
    expect(plugin.status).toBe(400);
    expect(plugin.body.fields.config).toHaveProperty('key_names');
    expect((await http().post('/schemas/plugins/validate').send({ name: 'key-auth' })).status).toBe(200);
  });

  it('GET /openapi.json describes the entities', async () => {
    const res = await http().get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/consumers', '/services', '/routes', '/plugins', '/key-auths']));
  });
});
