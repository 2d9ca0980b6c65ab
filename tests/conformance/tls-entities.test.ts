import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  createAdminApp,
  createRbac,
  keyMigrations,
  rbacMigrations,
  keyringFromSecret,
  openDatabase,
  readSnapshotConfig,
  tlsExtension,
  tlsMigrations,
  type AdminApp,
  type Database,
} from '@gatehouse/control-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { createTestDatabase } from '@gatehouse/testkit';
import { CertificateFactory, type Pem } from '../support/certificates';

/**
 * Kong 3.x certificates, snis, ca_certificates and vaults through the admin API (decision 22), on both databases:
 * validation messages, the `snis` shorthand, nested SNIs, cascades, PUT upsert, paging, tags, keys sealed at rest.
 */

const KEYRING_SECRET = 'tls-conformance-keyring-secret-0123456789';
const certs = new CertificateFactory();
let ca: Pem;
let ecA: Pem;
let ecB: Pem;
let rsaA: Pem;
let expired: Pem;
let leafNotCa: Pem;

beforeAll(async () => {
  ca = certs.ca();
  ecA = certs.signed(ca, ['a.example.test']);
  ecB = certs.signed(ca, ['b.example.test']);
  rsaA = certs.selfSigned(['a.example.test'], 'rsa');
  expired = await certs.expiredCa();
  leafNotCa = certs.selfSigned(['leaf.test']);
});
afterAll(() => certs.cleanup());

interface Harness {
  app: AdminApp;
  database: Database;
  close(): Promise<void>;
}

async function startAdmin(backend: 'postgres' | 'pglite'): Promise<Harness> {
  const keyring = keyringFromSecret(KEYRING_SECRET);
  let database: Database;
  let dispose: () => Promise<void>;
  if (backend === 'postgres') {
    const testDb = await createTestDatabase('gh_tls');
    database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: { ...keyMigrations(), ...rbacMigrations(), ...tlsMigrations() } }).catch(async (err) => {
      await testDb.drop();
      throw err;
    });
    dispose = () => testDb.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
    database = await openDatabase({ dataDir: dir, migrations: { ...keyMigrations(), ...rbacMigrations(), ...tlsMigrations() } });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  }
  // RBAC off, as Kong Manager runs without it; its extension gives the `/{workspace}/…` paths the UI calls
  const rbac = createRbac({ db: database.db, mode: 'off', log: () => {} });
  await rbac.bootstrap();
  const app = createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension, tlsExtension(keyring)], log: () => {} });
  return {
    app,
    database,
    async close() {
      await database.close();
      await dispose();
    },
  };
}

describe.each(['postgres', 'pglite'] as const)('TLS entities (%s)', (backend) => {
  let h: Harness;
  const http = () => request(h.app);

  beforeAll(async () => {
    h = await startAdmin(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function count(table: string): Promise<number> {
    const row = await h.database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  describe('certificates', () => {
    it('POST /certificates with snis → 201 with the pair, the SNI names and tags; the key is sealed at rest', async () => {
      const res = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, snis: ['a.example.test', '*.a.example.test'], tags: ['t1'] });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ cert: ecA.cert, key: ecA.key, cert_alt: null, key_alt: null, tags: ['t1'] });
      expect(res.body.snis).toEqual(['*.a.example.test', 'a.example.test']);
      const stored = await h.database.db.selectFrom('certificates').select('entity').where('id', '=', res.body.id).executeTakeFirstOrThrow();
      const entity = stored.entity as Record<string, unknown>;
      expect(String(entity.key)).toMatch(/^enc:v1:/);
      expect(JSON.stringify(entity)).not.toContain('PRIVATE KEY');
      expect(entity.snis).toBeUndefined();
      const sni = await http().get('/snis/a.example.test');
      expect(sni.status).toBe(200);
      expect(sni.body).toMatchObject({ name: 'a.example.test', certificate: { id: res.body.id } });
    });

    it('a key that is not the certificate\'s → 400 "certificate does not match key", nothing written', async () => {
      const before = await count('certificates');
      const res = await http().post('/certificates').send({ cert: ecA.cert, key: ecB.key, snis: ['mismatch.test'] });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 2, name: 'schema violation', fields: { '@entity': ['certificate does not match key'] } });
      expect(await count('certificates')).toBe(before);
      expect((await http().get('/snis/mismatch.test')).status).toBe(404);
    });

    it('text that is no certificate or no key → 400 naming the field', async () => {
      const res = await http().post('/certificates').send({ cert: 'not a certificate', key: 'nor a key' });
      expect(res.status).toBe(400);
      expect(res.body.fields.cert).toMatch(/^invalid certificate: /);
      expect(res.body.fields.key).toMatch(/^invalid key: /);
    });

    it('missing cert and key → required field missing', async () => {
      const res = await http().post('/certificates').send({});
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual({ cert: 'required field missing', key: 'required field missing' });
    });

    it('cert_alt without key_alt, and an alternative of the same key type, are refused as Kong does', async () => {
      const half = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, cert_alt: rsaA.cert });
      expect(half.status).toBe(400);
      expect(half.body.fields['@entity']).toEqual(["all or none of these fields must be set: 'cert_alt', 'key_alt'"]);
      const same = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, cert_alt: ecB.cert, key_alt: ecB.key });
      expect(same.status).toBe(400);
      expect(same.body.fields['@entity'][0]).toMatch(/^certificate and alternative certificate need to have different type/);
      const both = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, cert_alt: rsaA.cert, key_alt: rsaA.key });
      expect(both.status).toBe(201);
      expect(both.body.key_alt).toBe(rsaA.key);
    });

    it('an SNI name another certificate owns → 400 on the snis field, nothing written', async () => {
      const owner = await http().get('/snis/a.example.test');
      const before = await count('certificates');
      const res = await http().post('/certificates').send({ cert: ecB.cert, key: ecB.key, snis: ['free.test', 'a.example.test'] });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(`schema violation (snis: a.example.test already associated with existing certificate '${owner.body.certificate.id}')`);
      expect(await count('certificates')).toBe(before);
      expect((await http().get('/snis/free.test')).status).toBe(404);
    });

    it('PATCH with snis replaces the certificate\'s SNI set; PATCH without snis keeps it', async () => {
      const created = await http().post('/certificates').send({ cert: ecB.cert, key: ecB.key, snis: ['p1.test', 'p2.test'] });
      const id = created.body.id;
      const replaced = await http().patch(`/certificates/${id}`).send({ snis: ['p2.test', 'p3.test'] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.snis).toEqual(['p2.test', 'p3.test']);
      expect((await http().get('/snis/p1.test')).status).toBe(404);
      const kept = await http().patch(`/certificates/${id}`).send({ tags: ['x'] });
      expect(kept.body).toMatchObject({ snis: ['p2.test', 'p3.test'], tags: ['x'], key: ecB.key });
    });

    it('PUT /certificates/{id} creates, then replaces', async () => {
      const id = '6f2ad3a7-6d4b-4b80-9d36-6c1f0f1b0a01';
      const created = await http().put(`/certificates/${id}`).send({ cert: ecA.cert, key: ecA.key, snis: ['put.test'] });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ id, snis: ['put.test'] });
      const replaced = await http().put(`/certificates/${id}`).send({ cert: ecB.cert, key: ecB.key });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ id, cert: ecB.cert, snis: ['put.test'] });
    });

    it('nested /certificates/{c}/snis lists and creates; DELETE of the certificate cascades to its SNIs', async () => {
      const cert = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key });
      const id = cert.body.id;
      const made = await http().post(`/certificates/${id}/snis`).send({ name: 'nested.test' });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ name: 'nested.test', certificate: { id } });
      const list = await http().get(`/certificates/${id}/snis`);
      expect(list.body.data.map((s: { name: string }) => s.name)).toEqual(['nested.test']);
      expect((await http().get(`/snis/nested.test/certificate`)).body.id).toBe(id);
      expect((await http().get(`/certificates/${id}`)).body.snis).toEqual(['nested.test']);
      expect((await http().delete(`/certificates/${id}`)).status).toBe(204);
      expect((await http().get('/snis/nested.test')).status).toBe(404);
    });

    it('a certificate is named by one of its SNIs on GET, PATCH, DELETE and the nested SNI routes; an unknown name → 404 SNI not found', async () => {
      const cert = await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, snis: ['by-sni.test', 'also-by-sni.test'] });
      const id = cert.body.id;
      const read = await http().get('/certificates/by-sni.test');
      expect([read.status, read.body.id, read.body.snis]).toEqual([200, id, ['also-by-sni.test', 'by-sni.test']]);
      expect((await http().get('/certificates/also-by-sni.test')).body).toEqual(read.body);
      for (const method of ['get', 'patch', 'delete'] as const) {
        const missing = await http()[method]('/certificates/no-such-sni.test').send({});
        expect([method, missing.status, missing.body]).toEqual([method, 404, { message: 'SNI not found' }]);
      }
      expect((await http().get('/certificates/no-such-sni.test/snis')).body).toEqual({ message: 'SNI not found' });
      const patched = await http().patch('/certificates/by-sni.test').send({ tags: ['named'] });
      expect(patched.body).toMatchObject({ id, tags: ['named'], snis: ['also-by-sni.test', 'by-sni.test'] });
      const nested = await http().post('/certificates/by-sni.test/snis').send({ name: 'third-by-sni.test' });
      expect([nested.status, nested.body.certificate]).toEqual([201, { id }]);
      expect((await http().get('/certificates/by-sni.test/snis/third-by-sni.test')).body.name).toBe('third-by-sni.test');
      expect((await http().delete('/certificates/also-by-sni.test')).status).toBe(204);
      expect((await http().get(`/certificates/${id}`)).status).toBe(404);
      expect((await http().get('/snis/by-sni.test')).status).toBe(404);
    });

    it('PUT /certificates/{name} creates a certificate with that SNI, or replaces the one that has it, keeping the name among listed SNIs', async () => {
      const created = await http().put('/certificates/put-by-sni.test').send({ cert: ecA.cert, key: ecA.key, snis: ['put-other.test'] });
      expect(created.status).toBe(200);
      expect(created.body.snis).toEqual(['put-by-sni.test', 'put-other.test']);
      const replaced = await http().put('/certificates/put-other.test').send({ cert: ecB.cert, key: ecB.key, snis: ['put-third.test'] });
      expect([replaced.body.id, replaced.body.cert, replaced.body.snis]).toEqual([created.body.id, ecB.cert, ['put-other.test', 'put-third.test']]);
      const alone = await http().put('/certificates/put-alone.test').send({ cert: ecA.cert, key: ecA.key });
      expect([alone.status, alone.body.snis]).toEqual([200, ['put-alone.test']]);
      const form = await http().put('/certificates/put-form.test').type('form').send({ cert: ecA.cert, key: ecA.key, snis: 'put-form-other.test' });
      expect([form.status, form.body.snis]).toEqual([200, ['put-form-other.test', 'put-form.test']]);
    });

    it('vault references are accepted in cert and key, stored as given, and the pair check is skipped', async () => {
      const res = await http().post('/certificates').send({ cert: '{vault://env/gh-test-cert}', key: '{vault://env/gh-test-key}' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ cert: '{vault://env/gh-test-cert}', key: '{vault://env/gh-test-key}' });
      const stored = await h.database.db.selectFrom('certificates').select('entity').where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect((stored.entity as Record<string, unknown>).key).toBe('{vault://env/gh-test-key}');
    });

    it('paging and tags filter', async () => {
      const page = await http().get('/certificates?size=2');
      expect(page.body.data).toHaveLength(2);
      expect(page.body.next).toMatch(/^\/certificates\?offset=/);
      const tagged = await http().get('/certificates?tags=t1');
      expect(tagged.body.data).toHaveLength(1);
      expect(tagged.body.data[0].tags).toEqual(['t1']);
    });
  });

  it('a service\'s client_certificate must name an existing certificate', async () => {
    const missing = '00000000-0000-4000-8000-0000000000cc';
    const res = await http().post('/services').send({ name: 'mtls-missing', url: 'https://up.test', client_certificate: { id: missing } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 4, fields: { client_certificate: `the foreign key '{id="${missing}"}' does not reference an existing 'certificates' entity.` } });
    const cert = (await http().get('/certificates?size=1')).body.data[0];
    const ok = await http().post('/services').send({ name: 'mtls-ok', url: 'https://up.test', client_certificate: { id: cert.id } });
    expect(ok.status).toBe(201);
  });

  describe('certificates other entities use cannot be deleted', () => {
    it('a service\'s client_certificate: DELETE → 400 foreign key violation referenced by services, nothing deleted', async () => {
      const cert = (await http().post('/certificates').send({ cert: ecA.cert, key: ecA.key, snis: ['in-use.test'] })).body;
      const svc = await http().post('/services').send({ name: 'mtls-in-use', url: 'https://up.test', client_certificate: { id: cert.id } });
      expect(svc.status).toBe(201);
      const refused = await http().delete(`/certificates/${cert.id}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        code: 4,
        name: 'foreign key violation',
        message: "an existing 'services' entity references this 'certificates' entity",
        fields: { '@referenced_by': 'services' },
      });
      expect((await http().get(`/certificates/${cert.id}`)).status).toBe(200);
      expect((await http().get('/snis/in-use.test')).status).toBe(200);
      // once the service lets go of it, it can go
      expect((await http().patch(`/services/${svc.body.id}`).send({ client_certificate: null })).status).toBe(200);
      expect((await http().delete(`/certificates/${cert.id}`)).status).toBe(204);
      expect((await http().get(`/certificates/${cert.id}`)).status).toBe(404);
    });

    it('an upstream\'s client_certificate: must exist on write, and its certificate cannot be deleted while used', async () => {
      const missing = '00000000-0000-4000-8000-0000000000dd';
      const bad = await http().post('/upstreams').send({ name: 'mtls-missing.upstream', client_certificate: { id: missing } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 4, fields: { client_certificate: `the foreign key '{id="${missing}"}' does not reference an existing 'certificates' entity.` } });
      const cert = (await http().post('/certificates').send({ cert: ecB.cert, key: ecB.key })).body;
      const upstream = await http().post('/upstreams').send({ name: 'mtls-in-use.upstream', client_certificate: { id: cert.id } });
      expect(upstream.status).toBe(201);
      const refused = await http().delete(`/certificates/${cert.id}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 4, message: "an existing 'upstreams' entity references this 'certificates' entity", fields: { '@referenced_by': 'upstreams' } });
      expect((await http().delete(`/upstreams/${upstream.body.id}`)).status).toBe(204);
      expect((await http().delete(`/certificates/${cert.id}`)).status).toBe(204);
    });

    it('a CA certificate a service lists in ca_certificates: DELETE → 400 referenced by others, as Kong says it', async () => {
      const caCert = (await http().post('/ca_certificates').send({ cert: certs.ca().cert })).body;
      const svc = (await http().post('/services').send({ name: 'verify-in-use', url: 'https://up.test', tls_verify: true, ca_certificates: [caCert.id] })).body;
      const refused = await http().delete(`/ca_certificates/${caCert.id}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 19, name: 'referenced by others', message: `ca certificate ${caCert.id} is still referenced by services (id = ${svc.id})` });
      expect((await http().get(`/ca_certificates/${caCert.id}`)).status).toBe(200);
      expect((await http().patch(`/services/${svc.id}`).send({ ca_certificates: null })).status).toBe(200);
      expect((await http().delete(`/ca_certificates/${caCert.id}`)).status).toBe(204);
    });
  });

  describe('snis', () => {
    it.each([
      ['foo.*.test', 'wildcard must be leftmost or rightmost character'],
      ['*.foo.*', 'only one wildcard must be specified'],
      ['10.0.0.1', 'must not be an IP'],
      ['foo.test:8443', 'must not have a port'],
    ])('name %s → 400 "%s"', async (name, message) => {
      const cert = await http().get('/snis/a.example.test');
      const res = await http().post('/snis').send({ name, certificate: { id: cert.body.certificate.id } });
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual({ name: message });
    });

    it('accepts leftmost and rightmost wildcards; a duplicate name is a 409 unique violation', async () => {
      const cert = await http().get('/snis/a.example.test');
      const certificate = { id: cert.body.certificate.id };
      expect((await http().post('/snis').send({ name: '*.wild.test', certificate })).status).toBe(201);
      expect((await http().post('/snis').send({ name: 'wild.*', certificate })).status).toBe(201);
      const dup = await http().post('/snis').send({ name: 'wild.*', certificate });
      expect(dup.status).toBe(409);
      expect(dup.body).toMatchObject({ code: 5, name: 'unique constraint violation', message: `UNIQUE violation detected on '{name="wild.*"}'` });
    });

    it('an SNI needs an existing certificate', async () => {
      const missing = await http().post('/snis').send({ name: 'orphan.test', certificate: { id: '00000000-0000-4000-8000-000000000001' } });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe(4);
      const none = await http().post('/snis').send({ name: 'orphan.test' });
      expect(none.status).toBe(400);
      expect(none.body.fields).toEqual({ certificate: 'required field missing' });
    });
  });

  describe('ca_certificates', () => {
    it('POST → 201 with cert_digest (hex SHA-256 of the DER)', async () => {
      const res = await http().post('/ca_certificates').send({ cert: ca.cert, tags: ['ca'] });
      expect(res.status).toBe(201);
      const { X509Certificate } = await import('node:crypto');
      expect(res.body.cert_digest).toBe(new X509Certificate(ca.cert).fingerprint256.replace(/:/g, '').toLowerCase());
      expect(res.body).toMatchObject({ cert: ca.cert, tags: ['ca'] });
      const again = await http().post('/ca_certificates').send({ cert: ca.cert });
      expect(again.status).toBe(409);
      expect(again.body.message).toBe(`UNIQUE violation detected on '{cert_digest="${res.body.cert_digest}"}'`);
    });

    it('refuses a certificate without CA:TRUE, an expired one, and two at a time, with Kong\'s messages', async () => {
      const leaf = await http().post('/ca_certificates').send({ cert: leafNotCa.cert });
      expect(leaf.status).toBe(400);
      expect(leaf.body.fields['@entity']).toEqual(['certificate does not appear to be a CA because it is missing the "CA" basic constraint']);
      const old = await http().post('/ca_certificates').send({ cert: expired.cert });
      expect(old.status).toBe(400);
      expect(old.body.fields['@entity']).toEqual(['certificate expired, "Not After" time is in the past']);
      const two = await http().post('/ca_certificates').send({ cert: ca.cert + ecA.cert });
      expect(two.status).toBe(400);
      expect(two.body.fields['@entity']).toEqual(['please submit only one certificate at a time']);
    });
  });

  describe('vaults', () => {
    it('POST /vaults, GET by prefix, PUT upsert by prefix', async () => {
      const res = await http().post('/vaults').send({ name: 'env', prefix: 'my-env', description: 'd', config: { prefix: 'GH_' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'env', prefix: 'my-env', description: 'd', config: { prefix: 'GH_' } });
      expect((await http().get('/vaults/my-env')).body.id).toBe(res.body.id);
      const put = await http().put('/vaults/other-env').send({ name: 'env' });
      expect(put.status).toBe(200);
      expect(put.body.prefix).toBe('other-env');
      const dup = await http().post('/vaults').send({ name: 'env', prefix: 'my-env' });
      expect(dup.status).toBe(409);
    });

    it('unknown vault names and reserved or malformed prefixes are refused', async () => {
      const unknown = await http().post('/vaults').send({ name: 'hcv', prefix: 'vault-x' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.fields).toEqual({ name: "vault 'hcv' is not installed" });
      const reserved = await http().post('/vaults').send({ name: 'env', prefix: 'env' });
      expect(reserved.body.fields).toEqual({ prefix: 'must not be one of: env' });
      const bad = await http().post('/vaults').send({ name: 'env', prefix: 'Bad_Prefix' });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.fields)).toEqual(['prefix']);
    });
  });

  it('the snapshot carries certificates with keys in clear, SNIs, CA certificates and vaults (references unresolved)', async () => {
    const { config } = await readSnapshotConfig(h.app.locals.admin.store, { plugins: bundledPlugins, keyring: keyringFromSecret(KEYRING_SECRET), tls: true });
    const sni = config.snis!.find((s) => s.name === 'a.example.test')!;
    const cert = config.certificates!.find((c) => c.id === sni.certificate.id)!;
    expect(cert.key).toBe(ecA.key);
    expect(config.certificates!.some((c) => c.key === '{vault://env/gh-test-key}')).toBe(true);
    expect(config.ca_certificates!.map((c) => c.cert)).toContain(ca.cert);
    expect(config.vaults!.map((v) => v.prefix).sort()).toEqual(['my-env', 'other-env']);
  });

  it('Kong Manager\'s pages: workspace-prefixed lists of certificates, CA certificates, SNIs and vaults', async () => {
    for (const path of ['certificates', 'ca_certificates', 'snis', 'vaults']) {
      const res = await http().get(`/default/${path}?size=30`);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body.data)).toBe(true);
      expect(res.body.data.length).toBeGreaterThan(0);
    }
    const cert = (await http().get('/default/certificates?size=1')).body.data[0];
    expect((await http().get(`/default/certificates/${cert.id}`)).body.id).toBe(cert.id);
    expect((await http().get(`/default/certificates/${cert.id}/snis`)).status).toBe(200);
  });

  it('/schemas/certificates and the OpenAPI document know the TLS entities', async () => {
    const schema = await http().get('/schemas/certificates');
    expect(schema.status).toBe(200);
    const openapi = await http().get('/openapi.json');
    expect(openapi.status).toBe(200);
    expect(JSON.stringify(openapi.body)).toContain('/ca_certificates');
    expect((await http().get('/schemas/snis')).status).toBe(200);
    expect((await http().get('/schemas/vaults')).status).toBe(200);
    const env = await http().get('/schemas/vaults/env');
    expect(env.status).toBe(200);
    expect(JSON.stringify(env.body.fields)).toContain('"prefix"');
    expect((await http().get('/schemas/vaults/hcv')).status).toBe(404);
  });
});
