import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import request from 'supertest';
import {
  createAdminApp,
  keyMigrations,
  keyringFromSecret,
  keysExtension,
  loadKeysForSnapshot,
  openDatabase,
  type AdminApp,
  type Database,
} from '@gatehouse/control-plane';
import { createTestDatabase } from '@gatehouse/testkit';

/**
 * interface.md "Key set", "Key", "Keys and key sets"; kong-reference Part A 6 and Part B 5.1–5.3: every endpoint and
 * validation rule, with keys generated here (RSA 2048, EC P-256, P-384) as JWK and as PEM.
 */

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
interface Material {
  jwk: (kid: string) => string;
  publicJwk: (kid: string) => string;
  privatePem: string;
  publicPem: string;
  /** the private JWK member that must never be stored in clear */
  d: string;
}

async function material(pair: Pair): Promise<Material> {
  const priv = await exportJWK(pair.privateKey);
  const pub = await exportJWK(pair.publicKey);
  return {
    jwk: (kid) => JSON.stringify({ ...priv, kid }),
    publicJwk: (kid) => JSON.stringify({ ...pub, kid }),
    privatePem: await exportPKCS8(pair.privateKey),
    publicPem: await exportSPKI(pair.publicKey),
    d: String(priv.d),
  };
}

const keysOf: Record<'rsa' | 'rsa2' | 'p256' | 'p384', Material> = {} as any;
const KEYRING_SECRET = 'conformance-keyring-secret';

beforeAll(async () => {
  keysOf.rsa = await material(await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true }));
  keysOf.rsa2 = await material(await generateKeyPair('RSA-OAEP', { modulusLength: 2048, extractable: true }));
  keysOf.p256 = await material(await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true }));
  keysOf.p384 = await material(await generateKeyPair('ECDH-ES', { crv: 'P-384', extractable: true }));
});

interface Harness {
  app: AdminApp;
  database: Database;
  close(): Promise<void>;
}

async function startKeysAdmin(backend: 'postgres' | 'pglite'): Promise<Harness> {
  const keyring = keyringFromSecret(KEYRING_SECRET);
  let database: Database;
  let dispose: () => Promise<void>;
  if (backend === 'postgres') {
    const testDb = await createTestDatabase('gh_keys');
    database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: keyMigrations() }).catch(async (err) => {
      await testDb.drop();
      throw err;
    });
    dispose = () => testDb.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
    database = await openDatabase({ dataDir: dir, migrations: keyMigrations() });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  }
  const app = createAdminApp({ database, extensions: [keysExtension(keyring)], log: () => {} });
  return {
    app,
    database,
    async close() {
      await database.close();
      await dispose();
    },
  };
}

const SECONDS = /^\d{10}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(['postgres', 'pglite'] as const)('keys and key sets (%s)', (backend) => {
  let h: Harness;
  const http = () => request(h.app);

  beforeAll(async () => {
    h = await startKeysAdmin(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function createSet(name: string): Promise<{ id: string; name: string }> {
    const res = await http().post('/key-sets').send({ name });
    expect(res.status).toBe(201);
    return res.body;
  }

  async function rowCount(table: string): Promise<number> {
    const row = await h.database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  describe('key sets', () => {
    it('POST /key-sets returns 201 with id, name, tags, created_at, updated_at (seconds)', async () => {
      const res = await http().post('/key-sets').type('form').send({ name: 'ks-post', 'tags[1]': 'a', 'tags[2]': 'b' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'name', 'tags', 'updated_at']);
      expect(res.body).toMatchObject({ name: 'ks-post', tags: ['a', 'b'] });
      expect(res.body.id).toMatch(UUID);
      expect(String(res.body.created_at)).toMatch(SECONDS);
      expect(String(res.body.updated_at)).toMatch(SECONDS);
    });

    it('POST /key-sets with an empty body gives a set named null', async () => {
      const res = await http().post('/key-sets').send({});
      expect(res.status).toBe(201);
      expect(res.body.name).toBeNull();
      expect(res.body.tags).toBeNull();
    });

    it('PUT /key-sets with name in the body creates, then replaces the same set (200 both times)', async () => {
      const created = await http().put('/key-sets').type('form').send({ name: 'ks-put', 'tags[]': 'one' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ name: 'ks-put', tags: ['one'] });
      const replaced = await http().put('/key-sets').send({ name: 'ks-put' });
      expect(replaced.status).toBe(200);
      expect(replaced.body.id).toBe(created.body.id);
      expect(replaced.body.created_at).toBe(created.body.created_at);
      // PUT replaces: omitted fields go back to their defaults
      expect(replaced.body.tags).toBeNull();
    });

    it('PUT /key-sets without a name is a schema violation', async () => {
      const res = await http().put('/key-sets').send({ tags: ['x'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 2,
        name: 'schema violation',
        message: 'schema violation (name: required field missing)',
        fields: { name: 'required field missing' },
      });
    });

    it('GET /key-sets/{id_or_name} by name and by id; unknown → 404 Not found', async () => {
      const set = await createSet('ks-get');
      const byName = await http().get('/key-sets/ks-get');
      expect(byName.status).toBe(200);
      expect(byName.body).toEqual(set);
      expect((await http().get(`/key-sets/${set.id}`)).body).toEqual(set);
      const missing = await http().get('/key-sets/nope');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: 'Not found' });
      expect((await http().get('/key-sets/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    });

    it('PATCH /key-sets/{id_or_name} updates given fields only', async () => {
      const set = await createSet('ks-patch');
      const res = await http().patch('/key-sets/ks-patch').type('form').send({ 'tags[]': 'patched' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: set.id, name: 'ks-patch', tags: ['patched'] });
      const renamed = await http().patch(`/key-sets/${set.id}`).send({ name: 'ks-patched' });
      expect(renamed.body).toMatchObject({ id: set.id, name: 'ks-patched', tags: ['patched'] });
      expect((await http().patch('/key-sets/absent').send({ tags: ['x'] })).status).toBe(404);
    });

    it('PUT /key-sets/{name} creates and replaces by name; PUT /key-sets/{id} by id', async () => {
      const created = await http().put('/key-sets/ks-put-path').send({ tags: ['t'] });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ name: 'ks-put-path', tags: ['t'] });
      const replaced = await http().put(`/key-sets/${created.body.id}`).send({ name: 'ks-put-path-2' });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ id: created.body.id, name: 'ks-put-path-2', tags: null });
    });

    it('a duplicate name is 409 unique violation', async () => {
      await createSet('ks-dup');
      const res = await http().post('/key-sets').send({ name: 'ks-dup' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: 5,
        name: 'unique constraint violation',
        message: `UNIQUE violation detected on '{name="ks-dup"}'`,
        fields: { name: 'ks-dup' },
      });
    });

    it('an unknown field is refused', async () => {
      const res = await http().post('/key-sets').send({ name: 'ks-unknown', foo: 1 });
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual({ foo: 'unknown field' });
    });

    it('GET /key-sets pages with size, offset and next', async () => {
      for (const n of ['pg-1', 'pg-2', 'pg-3']) await createSet(n);
      const all = await http().get('/key-sets');
      expect(all.status).toBe(200);
      const total = all.body.data.length;
      expect(total).toBeGreaterThanOrEqual(3);
      expect(all.body.next).toBeNull();
      const seen: string[] = [];
      let next: string | null = '/key-sets?size=2';
      while (next) {
        const page: request.Response = await http().get(next);
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((s: { id: string }) => s.id));
        next = page.body.next;
        if (next) expect(typeof page.body.offset).toBe('string');
      }
      expect(seen).toEqual(all.body.data.map((s: { id: string }) => s.id));
      expect(seen).toHaveLength(total);
    });

    it('DELETE /key-sets/{id_or_name} → 204, and 204 again when absent', async () => {
      await createSet('ks-del');
      expect((await http().delete('/key-sets/ks-del')).status).toBe(204);
      expect((await http().get('/key-sets/ks-del')).status).toBe(404);
      expect((await http().delete('/key-sets/ks-del')).status).toBe(204);
    });
  });

  describe('keys', () => {
    it('POST /keys with a JWK (JSON body) returns 201 with jwk, pem null, set null', async () => {
      const jwk = keysOf.rsa.jwk('rsa-jwk');
      const res = await http().post('/keys').send({ name: 'rsa-jwk', kid: 'rsa-jwk', jwk });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'jwk', 'kid', 'name', 'pem', 'set', 'tags', 'updated_at']);
      expect(res.body).toMatchObject({ name: 'rsa-jwk', kid: 'rsa-jwk', jwk, pem: null, set: null, tags: null });
      expect(res.body.id).toMatch(UUID);
      expect(String(res.body.created_at)).toMatch(SECONDS);
      expect(String(res.body.updated_at)).toMatch(SECONDS);
    });

    it('POST /keys form-encoded with pem.private_key, pem.public_key and set.name', async () => {
      const set = await createSet('form-set');
      const res = await http().post('/keys').type('form').send({
        name: 'rsa-pem',
        kid: 'rsa-pem',
        'pem.private_key': keysOf.rsa.privatePem,
        'pem.public_key': keysOf.rsa.publicPem,
        'set.name': 'form-set',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'rsa-pem',
        kid: 'rsa-pem',
        jwk: null,
        pem: { private_key: keysOf.rsa.privatePem, public_key: keysOf.rsa.publicPem },
        set: { id: set.id },
      });
    });

    it('POST /keys form-encoded with set.id and a JWK string', async () => {
      const set = await createSet('form-set-id');
      const jwk = keysOf.p256.jwk('p256-form');
      const res = await http().post('/keys').type('form').send({ name: 'p256-form', kid: 'p256-form', jwk, 'set.id': set.id });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ jwk, pem: null, set: { id: set.id } });
    });

    it.each([
      ['RSA 2048', 'rsa'],
      ['EC P-256', 'p256'],
      ['EC P-384', 'p384'],
    ] as const)('%s: JWK private, JWK public, PEM pair, PEM private only and PEM public only are accepted', async (_label, which) => {
      const m = keysOf[which];
      const bodies = [
        { kid: `${which}-a`, jwk: m.jwk(`${which}-a`) },
        { kid: `${which}-b`, jwk: m.publicJwk(`${which}-b`) },
        { kid: `${which}-c`, pem: { private_key: m.privatePem, public_key: m.publicPem } },
        { kid: `${which}-d`, pem: { private_key: m.privatePem } },
        { kid: `${which}-e`, pem: { public_key: m.publicPem } },
      ];
      for (const body of bodies) {
        const res = await http().post('/keys').send(body);
        expect(res.status).toBe(201);
        expect(res.body.kid).toBe(body.kid);
        if ('jwk' in body) expect(res.body).toMatchObject({ jwk: body.jwk, pem: null });
        else expect(res.body).toMatchObject({ jwk: null, pem: { private_key: body.pem.private_key ?? null, public_key: body.pem.public_key ?? null } });
      }
    });

    it('GET /keys/{id_or_name}; unknown → 404', async () => {
      const created = (await http().post('/keys').send({ name: 'get-me', kid: 'get-me', pem: { private_key: keysOf.p384.privatePem } })).body;
      expect((await http().get('/keys/get-me')).body).toEqual(created);
      expect((await http().get(`/keys/${created.id}`)).body).toEqual(created);
      const missing = await http().get('/keys/absent-key');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: 'Not found' });
    });

    it('GET /keys lists keys with pagination', async () => {
      const page = await http().get('/keys?size=1');
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      expect(page.body.next).toMatch(/^\/keys\?/);
      expect(page.body.data[0]).toHaveProperty('kid');
    });

    it('PATCH /keys/{id_or_name} changes tags and keeps the (sealed) material usable', async () => {
      await http().post('/keys').send({ name: 'patch-me', kid: 'patch-me', pem: { private_key: keysOf.rsa.privatePem, public_key: keysOf.rsa.publicPem } });
      const res = await http().patch('/keys/patch-me').type('form').send({ 'tags[]': 'rotated' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ tags: ['rotated'], pem: { private_key: keysOf.rsa.privatePem, public_key: keysOf.rsa.publicPem } });
      // a PATCH of one PEM half is validated against the stored other half
      const mismatch = await http().patch('/keys/patch-me').send({ pem: { public_key: keysOf.rsa2.publicPem } });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.message).toBe('schema violation (public key does not match private key)');
      const jwkKey = await http().post('/keys').send({ name: 'patch-jwk', kid: 'patch-jwk', jwk: keysOf.p256.jwk('patch-jwk') });
      const patched = await http().patch('/keys/patch-jwk').send({ tags: ['x'] });
      expect(patched.status).toBe(200);
      expect(patched.body.jwk).toBe(jwkKey.body.jwk);
      // changing kid without the JWK's kid breaks Kong's rule
      const badKid = await http().patch('/keys/patch-jwk').send({ kid: 'other' });
      expect(badKid.status).toBe(400);
      expect(badKid.body.message).toBe('schema violation (kid in jwk.kid must be equal to keys.kid)');
      expect((await http().patch('/keys/absent').send({ tags: ['x'] })).status).toBe(404);
    });

    it('PUT /keys/{name} creates then replaces', async () => {
      const created = await http().put('/keys/put-key').send({ kid: 'put-key', jwk: keysOf.p384.jwk('put-key') });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ name: 'put-key', kid: 'put-key', pem: null });
      const replaced = await http().put('/keys/put-key').send({ kid: 'put-key-2', pem: { private_key: keysOf.p384.privatePem } });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ id: created.body.id, kid: 'put-key-2', jwk: null, pem: { private_key: keysOf.p384.privatePem, public_key: null } });
    });

    it('DELETE /keys/{id_or_name} → 204, 204 again when absent', async () => {
      await http().post('/keys').send({ name: 'del-key', kid: 'del-key', pem: { public_key: keysOf.rsa.publicPem } });
      expect((await http().delete('/keys/del-key')).status).toBe(204);
      expect((await http().get('/keys/del-key')).status).toBe(404);
      expect((await http().delete('/keys/del-key')).status).toBe(204);
    });

    it('GET /keys/{k}/set returns the key set; a key without a set → 404', async () => {
      const set = await createSet('owner-set');
      await http().post('/keys').send({ name: 'owned', kid: 'owned', jwk: keysOf.rsa.publicJwk('owned'), set: { id: set.id } });
      const res = await http().get('/keys/owned/set');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(set);
      await http().post('/keys').send({ name: 'unowned', kid: 'unowned', jwk: keysOf.rsa.publicJwk('unowned') });
      expect((await http().get('/keys/unowned/set')).status).toBe(404);
    });

    it('GET|POST /key-sets/{set}/keys and GET /key-sets/{s}/keys/{k}', async () => {
      const set = await createSet('nested-set');
      const other = await createSet('nested-other');
      const posted = await http().post('/key-sets/nested-set/keys').type('form').send({ name: 'nested-1', kid: 'n1', 'pem.private_key': keysOf.p256.privatePem });
      expect(posted.status).toBe(201);
      expect(posted.body.set).toEqual({ id: set.id });
      await http().post(`/key-sets/${set.id}/keys`).send({ name: 'nested-2', kid: 'n2', jwk: keysOf.p384.jwk('n2') });
      await http().post('/key-sets/nested-other/keys').send({ name: 'nested-3', kid: 'n3', jwk: keysOf.rsa.jwk('n3') });

      const list = await http().get('/key-sets/nested-set/keys');
      expect(list.status).toBe(200);
      expect(list.body.data.map((k: { name: string }) => k.name).sort()).toEqual(['nested-1', 'nested-2']);
      expect(list.body.next).toBeNull();
      expect((await http().get(`/key-sets/${other.id}/keys`)).body.data.map((k: { name: string }) => k.name)).toEqual(['nested-3']);

      const one = await http().get('/key-sets/nested-set/keys/nested-1');
      expect(one.status).toBe(200);
      expect(one.body).toEqual(posted.body);
      // a key of another set is not found under this one
      expect((await http().get('/key-sets/nested-set/keys/nested-3')).status).toBe(404);
      expect((await http().get('/key-sets/absent-set/keys')).status).toBe(404);
    });

    it('the same kid twice in one set is 409; in two sets it is fine', async () => {
      const a = await createSet('kid-a');
      await createSet('kid-b');
      expect((await http().post('/keys').send({ kid: 'shared', jwk: keysOf.rsa.jwk('shared'), set: { name: 'kid-a' } })).status).toBe(201);
      expect((await http().post('/keys').send({ kid: 'shared', jwk: keysOf.rsa.jwk('shared'), set: { name: 'kid-b' } })).status).toBe(201);
      const dup = await http().post('/key-sets/kid-a/keys').send({ kid: 'shared', pem: { private_key: keysOf.p256.privatePem } });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({
        code: 5,
        name: 'unique constraint violation',
        message: `UNIQUE violation detected on '{kid="shared",set={id="${a.id}"}}'`,
        fields: { kid: 'shared', set: { id: a.id } },
      });
    });

    it('a duplicate key name is 409', async () => {
      await http().post('/keys').send({ name: 'dup-name', kid: 'dn1', jwk: keysOf.rsa.publicJwk('dn1') });
      const res = await http().post('/keys').send({ name: 'dup-name', kid: 'dn2', jwk: keysOf.rsa.publicJwk('dn2') });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(`UNIQUE violation detected on '{name="dup-name"}'`);
    });

    it('set.name naming no key set is 400 foreign keys unresolved', async () => {
      const res = await http().post('/keys').type('form').send({ kid: 'orphan', jwk: keysOf.rsa.publicJwk('orphan'), 'set.name': 'no-such-set' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(13);
      expect(res.body.fields).toHaveProperty('set');
    });

    it('set.id naming no key set is 400 foreign key violation', async () => {
      const missing = '7d4e2b1c-0000-4000-8000-00000000abcd';
      const res = await http().post('/keys').send({ kid: 'orphan2', jwk: keysOf.rsa.publicJwk('orphan2'), set: { id: missing } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(4);
      expect(res.body.message).toBe(`the foreign key '{id="${missing}"}' does not reference an existing 'key_sets' entity.`);
    });
  });

  describe('validation (kong-reference Part B 5.3)', () => {
    async function refused(body: Record<string, unknown>, form = false) {
      const before = await rowCount('keys');
      const res = form ? await http().post('/keys').type('form').send(body) : await http().post('/keys').send(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(2);
      expect(res.body.name).toBe('schema violation');
      // a refused write leaves nothing behind
      expect(await rowCount('keys')).toBe(before);
      return res.body;
    }

    it('kid is required', async () => {
      const body = await refused({ jwk: keysOf.rsa.jwk('x') });
      expect(body.fields).toEqual({ kid: 'required field missing' });
      expect(body.message).toBe('schema violation (kid: required field missing)');
    });

    it('kid must be a string', async () => {
      expect((await refused({ kid: 12, jwk: keysOf.rsa.jwk('12') })).fields).toEqual({ kid: 'expected a string' });
    });

    it('neither jwk nor pem', async () => {
      const body = await refused({ kid: 'none' });
      expect(body.message).toBe("schema violation (at least one of these fields must be non-empty: 'jwk', 'pem')");
      expect(body.fields).toEqual({ '@entity': ["at least one of these fields must be non-empty: 'jwk', 'pem'"] });
    });

    it('both jwk and pem', async () => {
      const body = await refused({ kid: 'both', jwk: keysOf.rsa.jwk('both'), 'pem.private_key': keysOf.rsa.privatePem }, true);
      expect(body.message).toBe("schema violation (only one or none of these fields must be set: 'jwk', 'pem')");
    });

    it('jwk given as a JSON object is "expected a string"', async () => {
      const body = await refused({ kid: 'obj', jwk: JSON.parse(keysOf.rsa.jwk('obj')) });
      expect(body.fields).toEqual({ jwk: 'expected a string' });
    });

    it('jwk that is not JSON', async () => {
      expect((await refused({ kid: 'nj', jwk: '{"kty": "RSA"' })).message).toBe('schema violation (could not json decode jwk string)');
    });

    it('jwk.kid must equal kid', async () => {
      expect((await refused({ kid: 'outer', jwk: keysOf.p256.jwk('inner') })).message).toBe('schema violation (kid in jwk.kid must be equal to keys.kid)');
    });

    it('jwk that is not a key', async () => {
      const body = await refused({ kid: 'nk', jwk: JSON.stringify({ kid: 'nk', kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }) });
      expect(body.message).toBe('schema violation (could not load JWK, likely not a valid key)');
    });

    it('pem with neither half', async () => {
      expect((await refused({ kid: 'pe', pem: {} })).message).toBe('schema violation (need to supply a PEM formatted public and/or private key.)');
    });

    it('pem public key that does not load', async () => {
      const body = await refused({ kid: 'pp', 'pem.public_key': 'not a pem' }, true);
      expect(body.fields).toEqual({ pem: { public_key: 'could not load public key' } });
    });

    it('pem private key that does not load', async () => {
      // a real key cut short after a few lines
      const lines = keysOf.rsa.privatePem.trim().split('\n');
      const truncated = [...lines.slice(0, 5), lines[lines.length - 1]].join('\n');
      const body = await refused({ kid: 'pk', pem: { private_key: truncated } });
      expect(body.fields).toEqual({ pem: { private_key: 'could not load private key' } });
    });

    it('pem halves that are not a pair', async () => {
      for (const [priv, pub] of [
        [keysOf.rsa.privatePem, keysOf.rsa2.publicPem],
        [keysOf.p256.privatePem, keysOf.p384.publicPem],
      ]) {
        expect((await refused({ kid: 'mm', pem: { private_key: priv, public_key: pub } })).message).toBe('schema violation (public key does not match private key)');
      }
    });
  });

  it('deleting a key set deletes its keys and nothing else (4 keys, 2 in the set → 2 remain)', async () => {
    const fresh = await startKeysAdmin(backend);
    try {
      const api = () => request(fresh.app);
      const set = (await api().post('/key-sets').send({ name: 'cascade' })).body;
      const other = (await api().post('/key-sets').send({ name: 'survivor' })).body;
      await api().post('/keys').send({ name: 'c1', kid: 'c1', jwk: keysOf.rsa.jwk('c1'), set: { id: set.id } });
      await api().post('/keys').type('form').send({ name: 'c2', kid: 'c2', 'pem.private_key': keysOf.p256.privatePem, 'set.name': 'cascade' });
      await api().post('/keys').send({ name: 'c3', kid: 'c3', jwk: keysOf.p384.jwk('c3') });
      await api().post('/keys').send({ name: 'c4', kid: 'c4', pem: { public_key: keysOf.rsa.publicPem }, set: { id: other.id } });
      expect((await api().get('/keys')).body.data).toHaveLength(4);

      expect((await api().delete('/key-sets/cascade')).status).toBe(204);
      const remaining = (await api().get('/keys')).body.data.map((k: { name: string }) => k.name).sort();
      expect(remaining).toEqual(['c3', 'c4']);
      expect((await api().get('/key-sets/survivor')).status).toBe(200);
      expect((await api().get('/key-sets')).body.data).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it('private key material is not stored in plaintext', async () => {
    await http().post('/keys').send({ name: 'secret-jwk', kid: 'secret-jwk', jwk: keysOf.p384.jwk('secret-jwk') });
    await http().post('/keys').send({ name: 'secret-pem', kid: 'secret-pem', pem: { private_key: keysOf.rsa2.privatePem, public_key: keysOf.rsa2.publicPem } });
    // every column of the two rows, as the database holds them
    const rows = await h.database.db.selectFrom('keys').selectAll().where('name', 'in', ['secret-jwk', 'secret-pem']).execute();
    expect(rows).toHaveLength(2);
    const stored = JSON.stringify(rows);
    const pemBody = keysOf.rsa2.privatePem.split('\n').slice(1, -2).join('');
    expect(stored).not.toContain(keysOf.p384.d);
    expect(stored).not.toContain(pemBody.slice(0, 64));
    expect(stored).not.toContain('PRIVATE KEY');
    expect(stored).toContain('enc:v1:');
    // public material stays readable
    expect(stored).toContain(keysOf.rsa2.publicPem.split('\n')[1]!);
    // and the admin API still gives back what was written
    expect((await http().get('/keys/secret-pem')).body.pem.private_key).toBe(keysOf.rsa2.privatePem);
    expect((await http().get('/keys/secret-jwk')).body.jwk).toBe(keysOf.p384.jwk('secret-jwk'));
  });

  it('a client cannot smuggle a value that looks sealed', async () => {
    const res = await http().post('/keys').send({ kid: 'smuggle', pem: { private_key: 'enc:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual({ pem: { private_key: 'could not load private key' } });
  });

  it('snapshot: loadKeysForSnapshot gives key sets and keys ordered by id, private material decrypted', async () => {
    const set = await createSet('snap-set');
    const jwkKey = (await http().post('/keys').send({ name: 'snap-jwk', kid: 'snap-jwk', jwk: keysOf.p256.jwk('snap-jwk'), set: { id: set.id } })).body;
    const pemKey = (await http().post('/key-sets/snap-set/keys').send({ name: 'snap-pem', kid: 'snap-pem', pem: { private_key: keysOf.rsa.privatePem } })).body;
    const snapshot = await loadKeysForSnapshot(h.database.db, keyringFromSecret(KEYRING_SECRET));
    const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id);
    expect(ids(snapshot.key_sets)).toEqual([...ids(snapshot.key_sets)].sort());
    expect(ids(snapshot.keys)).toEqual([...ids(snapshot.keys)].sort());
    expect(snapshot.key_sets).toContainEqual({ id: set.id, name: 'snap-set' });
    expect(snapshot.keys).toContainEqual({ id: jwkKey.id, name: 'snap-jwk', kid: 'snap-jwk', set: { id: set.id }, jwk: keysOf.p256.jwk('snap-jwk'), pem: null });
    expect(snapshot.keys).toContainEqual({
      id: pemKey.id,
      name: 'snap-pem',
      kid: 'snap-pem',
      set: { id: set.id },
      jwk: null,
      pem: { private_key: keysOf.rsa.privatePem, public_key: null },
    });
    // no sealed value reaches a data plane
    expect(JSON.stringify(snapshot)).not.toContain('enc:v1:');
    // another keyring cannot open the stored material
    await expect(loadKeysForSnapshot(h.database.db, keyringFromSecret('another secret'))).rejects.toThrow(/cannot decrypt/);
  });
});
