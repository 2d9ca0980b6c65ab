import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createAdminApp, createRbac, keyringFromSecret, openDatabase, rbacMigrations, tlsExtension, tlsMigrations, type AdminApp, type Database } from '@gatehouse/control-plane';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testkit';
import { CertificateFactory, type Pem } from '../support/certificates';

/** Decision 18 for certificates: `key` and `key_alt` only to callers that may write certificates. */

const ADMIN_TOKEN = 'tls-private-keys-admin-token-0123456789abcdef';
const READER_TOKEN = 'tls-private-keys-reader-token-0123456789abcdef';
const certs = new CertificateFactory();
let pem: Pem;
let testDb: TestDatabase;
let database: Database;
let app: AdminApp;

beforeAll(async () => {
  pem = certs.selfSigned(['private.test']);
  testDb = await createTestDatabase('gh_tls_rbac');
  database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: { ...rbacMigrations(), ...tlsMigrations() } });
  const rbac = createRbac({ db: database.db, mode: 'on', adminToken: ADMIN_TOKEN, log: () => {} });
  await rbac.bootstrap();
  app = createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension, tlsExtension(keyringFromSecret('tls-private-keys-keyring'))], log: () => {} });
  const asAdmin = (req: request.Test) => req.set('Kong-Admin-Token', ADMIN_TOKEN);
  expect((await asAdmin(request(app).post('/rbac/users')).send({ name: 'reader', user_token: READER_TOKEN })).status).toBe(201);
  expect((await asAdmin(request(app).post('/rbac/users/reader/roles')).send({ roles: 'read-only' })).status).toBe(201);
});
afterAll(async () => {
  await database?.close();
  await testDb?.drop();
  certs.cleanup();
});

describe('certificate private keys on reads (decision 18)', () => {
  let id: string;

  beforeAll(async () => {
    const res = await request(app).post('/certificates').set('Kong-Admin-Token', ADMIN_TOKEN).send({ cert: pem.cert, key: pem.key, snis: ['private.test'] });
    expect(res.status).toBe(201);
    id = res.body.id;
  });

  it('a caller who may write certificates reads the key', async () => {
    const res = await request(app).get(`/certificates/${id}`).set('Kong-Admin-Token', ADMIN_TOKEN);
    expect(res.status).toBe(200);
    expect(res.body.key).toBe(pem.key);
  });

  it('the read-only role reads certificates without key and key_alt, one by one, in lists and through an SNI', async () => {
    const one = await request(app).get(`/certificates/${id}`).set('Kong-Admin-Token', READER_TOKEN);
    expect(one.status).toBe(200);
    expect(one.body.cert).toBe(pem.cert);
    expect(one.body).not.toHaveProperty('key');
    expect(one.body).not.toHaveProperty('key_alt');
    const list = await request(app).get('/certificates').set('Kong-Admin-Token', READER_TOKEN);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).not.toHaveProperty('key');
    expect(list.body.data[0].snis).toEqual(['private.test']);
    const viaSni = await request(app).get('/snis/private.test/certificate').set('Kong-Admin-Token', READER_TOKEN);
    expect(viaSni.status).toBe(200);
    expect(viaSni.body.id).toBe(id);
    expect(viaSni.body).not.toHaveProperty('key');
  });
});
