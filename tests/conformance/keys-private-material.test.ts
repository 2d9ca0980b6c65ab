/**
 * Decision 18: responses carry the private members of keys (JWK `d`, `p`, `q`, `dp`, `dq`, `qi`, `k`;
 * `pem.private_key`) only to callers that may create or update keys. With RBAC on, the built-in `read-only` role
 * gets them removed from every read (GET /keys, GET /keys/{k}, GET /key-sets/{s}/keys[/{k}]); `admin`,
 * `super-admin` and a role allowed to update keys get them. With RBAC off the admin API returns them.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import request from 'supertest';
import {
  createAdminApp,
  createRbac,
  keyMigrations,
  keyringFromSecret,
  keysExtension,
  openDatabase,
  rbacMigrations,
  type AdminApp,
  type Database,
  type EnforceMode,
} from '@gatehouse/control-plane';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testkit';

jest.setTimeout(60_000);

const BOOT = 'private-material-boot-token-0123456789';
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

interface Harness {
  app: AdminApp;
  database: Database;
  testDb: TestDatabase;
}

async function start(mode: EnforceMode): Promise<Harness> {
  const testDb = await createTestDatabase('gh_private');
  const database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: { ...keyMigrations(), ...rbacMigrations() } });
  const rbac = createRbac({ db: database.db, mode, adminToken: BOOT, log: () => {} });
  await rbac.bootstrap();
  const app = createAdminApp({
    database,
    middleware: rbac.middleware,
    extensions: [rbac.extension, keysExtension(keyringFromSecret('private-material-keyring-secret-0123456789'))],
    log: () => {},
  });
  return { app, database, testDb };
}

let rsa: { jwk: Record<string, unknown>; privatePem: string; publicPem: string };
let ec: { jwk: Record<string, unknown> };

beforeAll(async () => {
  const rsaPair = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const ecPair = await generateKeyPair('ES256', { extractable: true });
  rsa = { jwk: { ...(await exportJWK(rsaPair.privateKey)) }, privatePem: await exportPKCS8(rsaPair.privateKey), publicPem: await exportSPKI(rsaPair.publicKey) };
  ec = { jwk: { ...(await exportJWK(ecPair.privateKey)) } };
});

/** the JWK members and PEM parts a key response shows */
function material(key: { jwk: string | null; pem: Record<string, unknown> | null }) {
  return {
    jwk: key.jwk === null ? null : (JSON.parse(key.jwk) as Record<string, unknown>),
    pem: key.pem,
  };
}

async function seed(http: () => ReturnType<typeof request>, token?: string) {
  const send = (req: request.Test) => (token ? req.set('Kong-Admin-Token', token) : req);
  const ok = async (req: request.Test, status: number) => {
    const res = await send(req);
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
    return res;
  };
  await ok(http().post('/key-sets').send({ name: 'ks' }), 201);
  await ok(http().post('/keys').send({ name: 'rsa-jwk', kid: 'rsa-jwk', set: { name: 'ks' }, jwk: JSON.stringify({ ...rsa.jwk, kid: 'rsa-jwk' }) }), 201);
  await ok(http().post('/keys').send({ name: 'ec-jwk', kid: 'ec-jwk', set: { name: 'ks' }, jwk: JSON.stringify({ ...ec.jwk, kid: 'ec-jwk' }) }), 201);
  await ok(http().post('/keys').send({ name: 'rsa-pem', kid: 'rsa-pem', set: { name: 'ks' }, pem: { private_key: rsa.privatePem, public_key: rsa.publicPem } }), 201);
}

function expectRedacted(key: { name: string; jwk: string | null; pem: Record<string, unknown> | null }) {
  const shown = material(key);
  if (key.name === 'rsa-pem') {
    expect(shown.pem).toEqual({ public_key: rsa.publicPem });
  } else {
    for (const member of PRIVATE_JWK_MEMBERS) expect([key.name, member, shown.jwk?.[member]]).toEqual([key.name, member, undefined]);
    // the public members stay
    const source = key.name === 'rsa-jwk' ? rsa.jwk : ec.jwk;
    const publicMembers = Object.fromEntries(Object.entries(source).filter(([m]) => !PRIVATE_JWK_MEMBERS.includes(m)));
    expect(shown.jwk).toEqual({ ...publicMembers, kid: key.name });
  }
}

function expectComplete(key: { name: string; jwk: string | null; pem: Record<string, unknown> | null }) {
  const shown = material(key);
  if (key.name === 'rsa-pem') expect(shown.pem).toEqual({ private_key: rsa.privatePem, public_key: rsa.publicPem });
  else expect(shown.jwk).toEqual({ ...(key.name === 'rsa-jwk' ? rsa.jwk : ec.jwk), kid: key.name });
}

describe('with RBAC on (endpoint permissions)', () => {
  let h: Harness;
  const as = (token: string) => ({
    get: (path: string) => request(h.app).get(path).set('Kong-Admin-Token', token),
  });
  const boot = () => (req: request.Test) => req.set('Kong-Admin-Token', BOOT);

  beforeAll(async () => {
    h = await start('on');
    const http = () => request(h.app);
    await seed(http, BOOT);
    const post = (path: string, body: Record<string, unknown>) => boot()(request(h.app).post(path)).send(body);
    for (const [name, roles] of [
      ['reader', 'read-only'],
      ['administrator', 'admin'],
      ['root', 'super-admin'],
    ] as const) {
      expect((await post('/rbac/users', { name, user_token: `${name}-token-0123456789` })).status).toBe(201);
      expect((await post(`/rbac/users/${name}/roles`, { roles })).status).toBe(201);
    }
    // a custom role that reads everything and may update keys (not create them)
    expect((await post('/rbac/roles', { name: 'key-rotator' })).status).toBe(201);
    expect((await post('/rbac/roles/key-rotator/endpoints', { endpoint: '*', actions: 'read' })).status).toBe(201);
    expect((await post('/rbac/roles/key-rotator/endpoints', { endpoint: '/keys/*', actions: 'read,update' })).status).toBe(201);
    expect((await post('/rbac/users', { name: 'rotator', user_token: 'rotator-token-0123456789' })).status).toBe(201);
    expect((await post('/rbac/users/rotator/roles', { roles: 'key-rotator' })).status).toBe(201);
  });
  afterAll(async () => {
    await h?.database.close();
    await h?.testDb.drop();
  });

  const READS: Array<[string, string]> = [
    ['GET /keys', '/keys'],
    ['GET /keys/{name}', '/keys/rsa-jwk'],
    ['GET /keys/{name} (EC)', '/keys/ec-jwk'],
    ['GET /keys/{name} (PEM)', '/keys/rsa-pem'],
    ['GET /key-sets/{s}/keys', '/key-sets/ks/keys'],
    ['GET /key-sets/{s}/keys/{k}', '/key-sets/ks/keys/rsa-pem'],
  ];

  async function keysAt(token: string, path: string) {
    const res = await as(token).get(path);
    expect(res.status).toBe(200);
    const keys = (Array.isArray(res.body.data) ? res.body.data : [res.body]) as Array<{ name: string; jwk: string | null; pem: Record<string, unknown> | null }>;
    expect(keys.length).toBeGreaterThan(0);
    return keys;
  }

  it.each(READS)('read-only: %s carries no private member', async (_label, path) => {
    const keys = await keysAt('reader-token-0123456789', path);
    for (const key of keys) expectRedacted(key);
    if (path === '/keys') expect(keys.map((k) => k.name).sort()).toEqual(['ec-jwk', 'rsa-jwk', 'rsa-pem']);
  });

  it('read-only: GET /keys/{id} too, and nothing private appears anywhere in the body', async () => {
    const listed = await as('reader-token-0123456789').get('/keys');
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(String(rsa.jwk.d));
    expect(text).not.toContain(String(ec.jwk.d));
    expect(text).not.toContain('PRIVATE KEY');
    const id = (listed.body.data as Array<{ id: string; name: string }>).find((k) => k.name === 'ec-jwk')!.id;
    expectRedacted((await as('reader-token-0123456789').get(`/keys/${id}`)).body);
  });

  it.each(READS)('admin and super-admin: %s carries the private members', async (_label, path) => {
    for (const token of ['administrator-token-0123456789', 'root-token-0123456789', BOOT]) {
      for (const key of await keysAt(token, path)) expectComplete(key);
    }
  });

  it('GET /config: the read-only role gets the document without private members, super-admin with them', async () => {
    const reader = await as('reader-token-0123456789').get('/config');
    expect(reader.status).toBe(200);
    const text = JSON.stringify(reader.body);
    expect(text).not.toContain(String(rsa.jwk.d));
    expect(text).not.toContain('PRIVATE KEY');
    const readerKeys = reader.body.keys as Array<{ name: string; jwk?: string; pem?: Record<string, unknown> }>;
    for (const key of readerKeys) expectRedacted({ name: key.name, jwk: key.jwk ?? null, pem: key.pem ?? null });
    const root = await as('root-token-0123456789').get('/config');
    for (const key of root.body.keys as Array<{ name: string; jwk?: string; pem?: Record<string, unknown> }>) {
      expectComplete({ name: key.name, jwk: key.jwk ?? null, pem: key.pem ?? null });
    }
  });

  it('a role that may update keys sees them there; the same role reads key sets without that right', async () => {
    expectComplete((await keysAt('rotator-token-0123456789', '/keys/rsa-jwk'))[0]!);
    expectComplete((await keysAt('rotator-token-0123456789', '/keys/rsa-pem'))[0]!);
    // under /key-sets the role has no write permission: the material is removed
    for (const key of await keysAt('rotator-token-0123456789', '/key-sets/ks/keys')) expectRedacted(key);
  });
});

describe('with RBAC on (entity permissions)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start('entity');
    await seed(() => request(h.app), BOOT);
    const post = (path: string, body: Record<string, unknown>) => request(h.app).post(path).set('Kong-Admin-Token', BOOT).send(body);
    expect((await post('/rbac/users', { name: 'reader', user_token: 'reader-token-0123456789' })).status).toBe(201);
    expect((await post('/rbac/users/reader/roles', { roles: 'read-only' })).status).toBe(201);
  });
  afterAll(async () => {
    await h?.database.close();
    await h?.testDb.drop();
  });

  it('read-only gets no private member; the super-admin gets them', async () => {
    const asReader = await request(h.app).get('/keys').set('Kong-Admin-Token', 'reader-token-0123456789');
    expect(asReader.status).toBe(200);
    expect(asReader.body.data).toHaveLength(3);
    for (const key of asReader.body.data) expectRedacted(key);
    const asRoot = await request(h.app).get('/keys').set('Kong-Admin-Token', BOOT);
    for (const key of asRoot.body.data) expectComplete(key);
  });
});

describe('with RBAC off', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start('off');
    await seed(() => request(h.app));
  });
  afterAll(async () => {
    await h?.database.close();
    await h?.testDb.drop();
  });

  it('the admin API is the operator own: every read carries the private members', async () => {
    for (const path of ['/keys', '/keys/rsa-jwk', '/keys/rsa-pem', '/key-sets/ks/keys']) {
      const res = await request(h.app).get(path);
      expect(res.status).toBe(200);
      for (const key of Array.isArray(res.body.data) ? res.body.data : [res.body]) expectComplete(key);
    }
  });
});
