import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import {
  createAdminApp,
  documentKinds,
  keyMigrations,
  offlineDocumentKinds,
  keyringFromSecret,
  keysExtension,
  openDatabase,
  tlsExtension,
  tlsMigrations,
  type AdminApp,
  type Database,
} from '@gatehouse/control-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { createTestDatabase } from '@gatehouse/testkit';
import { CertificateFactory } from '../support/certificates';

interface Harness {
  app: AdminApp;
  database: Database;
  committed: Array<number | null>;
  close(): Promise<void>;
}

async function startDeclarativeAdmin(backend: 'postgres' | 'pglite'): Promise<Harness> {
  const keyring = keyringFromSecret('declarative-conformance-keyring-secret');
  let database: Database;
  let dispose: () => Promise<void>;
  if (backend === 'postgres') {
    const testDb = await createTestDatabase('gh_decl');
    database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: { ...keyMigrations(), ...tlsMigrations() } }).catch(async (err) => {
      await testDb.drop();
      throw err;
    });
    dispose = () => testDb.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-decl-'));
    database = await openDatabase({ dataDir: dir, migrations: { ...keyMigrations(), ...tlsMigrations() } });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  }
  const committed: Array<number | null> = [];
  const app = createAdminApp({ database, extensions: [keysExtension(keyring), tlsExtension(keyring)], onCommitted: (v) => void committed.push(v), log: () => {} });
  return {
    app,
    database,
    committed,
    async close() {
      await database.close();
      await dispose();
    },
  };
}

const certificates = new CertificateFactory();
afterAll(() => certificates.cleanup());

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const RSA_PRIVATE = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const RSA_PUBLIC = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe.each(['postgres', 'pglite'] as const)('declarative configuration: GET/POST /config (%s)', (backend) => {
  let h: Harness;
  const http = () => request(h.app);

  beforeAll(async () => {
    h = await startDeclarativeAdmin(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function ok(res: request.Response, status = 201): Promise<Record<string, unknown>> {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function rowCounts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const kind of documentKinds(h.app.locals.admin.entities)) {
      const row = await h.database.db.selectFrom(kind.def.name).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      out[kind.def.name] = Number(row.n);
    }
    return out;
  }

  /** one entity of every family and every credential type, written through the admin API */
  async function buildEverything(): Promise<void> {
    const service = await ok(await http().post('/services').send({ name: 'billing', url: 'http://billing.internal:8080/v1', tags: ['team-a'] }));
    const route = await ok(await http().post(`/services/${service.id}/routes`).send({ name: 'billing-route', paths: ['/billing'], tags: ['team-a'] }));
    await ok(await http().post(`/routes/${route.id}/plugins`).send({ name: 'key-auth', config: { key_names: ['apikey'] } }));
    const consumer = await ok(await http().post('/consumers').send({ username: 'alice', custom_id: 'c-1', tags: ['team-a'] }));
    await ok(await http().post(`/consumers/${consumer.id}/plugins`).send({ name: 'rate-limiting', config: { minute: 10, policy: 'local' } }));
    await ok(await http().post('/consumers/alice/key-auth').send({ key: 'alice-key' }));
    await ok(await http().post('/consumers/alice/basic-auth').send({ username: 'alice-basic', password: 'hunter2' }));
    await ok(await http().post('/consumers/alice/jwt').send({ key: 'alice-jwt', secret: 'alice-jwt-secret-that-is-long-enough' }));
    await ok(await http().post('/consumers/alice/hmac-auth').send({ username: 'alice-hmac', secret: 'hmac-secret' }));
    await ok(await http().post('/consumers/alice/oauth2').send({ name: 'alice-app', client_id: 'alice-client', client_secret: 'alice-secret', redirect_uris: ['https://app.example/cb'] }));
    await ok(await http().post('/consumers/alice/acls').send({ group: 'gold' }));
    await ok(await http().post('/upstreams').send({ name: 'billing.upstream', algorithm: 'consistent-hashing', hash_on: 'consumer' }));
    await ok(await http().post('/upstreams/billing.upstream/targets').send({ target: '10.0.0.7:8080', weight: 50 }));
    const ca = certificates.ca('Declarative Test CA');
    const server = certificates.signed(ca, ['billing.example.test']);
    const cert = await ok(await http().post('/certificates').send({ cert: server.cert, key: server.key, tags: ['team-a'] }));
    await ok(await http().post(`/certificates/${cert.id}/snis`).send({ name: 'billing.example.test' }));
    await ok(await http().post('/ca_certificates').send({ cert: ca.cert }));
    await ok(await http().post('/vaults').send({ name: 'env', prefix: 'my-env', config: { prefix: 'GATEHOUSE_' } }));
    const set = await ok(await http().post('/key-sets').send({ name: 'signing' }));
    await ok(await http().post('/keys').send({ name: 'rsa-1', kid: 'rsa-1', set: { id: set.id }, pem: { private_key: RSA_PRIVATE, public_key: RSA_PUBLIC } }));
  }

  it('dumps every entity family the configuration holds, byte-identical between two dumps', async () => {
    await buildEverything();
    const first = await http().get('/config');
    expect(first.status).toBe(200);
    const second = await http().get('/config');
    expect(second.text).toBe(first.text);
    const doc = first.body as Record<string, unknown[]>;
    expect(doc._format_version).toBe('3.0');
    for (const kind of documentKinds(h.app.locals.admin.entities)) {
      expect([kind.def.name, Array.isArray(doc[kind.def.name]) && doc[kind.def.name]!.length > 0]).toEqual([kind.def.name, true]);
    }
    // references are plain ids, private key material is part of the document, secrets stay hashed
    const routes = doc.routes as Array<Record<string, unknown>>;
    const services = doc.services as Array<Record<string, unknown>>;
    expect(routes[0]!.service).toBe(services[0]!.id);
    const keys = doc.keys as Array<{ pem: { private_key: string } }>;
    expect(keys[0]!.pem.private_key).toBe(RSA_PRIVATE);
    const basic = doc.basicauth_credentials as Array<{ password: string }>;
    expect(basic[0]!.password).toMatch(/^\$2[aby]\$/);
  });

  it('the offline checker (gatehouse config validate) knows the same entity families as the admin API', () => {
    const names = (kinds: Array<{ def: { name: string } }>) => kinds.map((k) => k.def.name);
    expect(names(offlineDocumentKinds(bundledPlugins))).toEqual(names(documentKinds(h.app.locals.admin.entities)));
  });

  it('round trip: dump → reset → apply → dump gives the same bytes, in one config version each', async () => {
    const dump = await http().get('/config');
    const before = h.committed.length;
    const reset = await http().post('/config').send({ _format_version: '3.0' });
    expect(reset.status).toBe(201);
    expect(h.committed.length).toBe(before + 1);
    expect(Object.values(await rowCounts()).every((n) => n === 0)).toBe(true);
    expect((await http().get('/consumers')).body.data).toEqual([]);

    const applied = await http().post('/config').send(dump.body);
    expect(applied.status).toBe(201);
    expect(h.committed.length).toBe(before + 2);
    const again = await http().get('/config');
    expect(again.text).toBe(dump.text);
    // the applied configuration works as one written through the admin API: the basic-auth hash was kept
    expect((await http().get('/consumers/alice/basic-auth/alice-basic')).body.password).toBe((dump.body.basicauth_credentials as Array<{ password: string }>)[0]!.password);
  });

  it('YAML both ways: ?format=yaml dumps YAML, and a YAML body applies', async () => {
    const json = await http().get('/config');
    const yaml = await http().get('/config?format=yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(parseYaml(yaml.text)).toEqual(json.body);
    await ok(await http().post('/config').send({ _format_version: '3.0' }));
    const applied = await http().post('/config').set('Content-Type', 'application/yaml').send(yaml.text);
    expect(applied.status).toBe(201);
    expect((await http().get('/config')).text).toBe(json.text);
  });

  it("Kong's form: the document as a string in `config`", async () => {
    const dump = await http().get('/config?format=yaml');
    const applied = await http().post('/config').type('form').send({ config: dump.text });
    expect(applied.status).toBe(201);
    expect((await http().get('/config?format=yaml')).text).toBe(dump.text);
  });

  it('?check_hash=1 answers 304 when nothing would change, and applies when something would', async () => {
    const dump = await http().get('/config');
    const before = h.committed.length;
    const same = await http().post('/config?check_hash=1').send(dump.body);
    expect(same.status).toBe(304);
    expect(h.committed.length).toBe(before);

    const changed = structuredClone(dump.body) as Record<string, Array<Record<string, unknown>>>;
    changed.consumers![0]!.custom_id = 'c-2';
    const applied = await http().post('/config?check_hash=1').send(changed);
    expect(applied.status).toBe(201);
    expect((await http().get('/consumers/alice')).body.custom_id).toBe('c-2');
  });

  it('?dry_run=1 lists what would be created, changed and deleted, and writes nothing', async () => {
    const dump = (await http().get('/config')).body as Record<string, Array<Record<string, unknown>>>;
    const doc = structuredClone(dump);
    doc.consumers![0]!.custom_id = 'c-3';
    doc.consumers!.push({ username: 'bob' });
    delete doc.acls;
    const before = await rowCounts();
    const res = await http().post('/config?dry_run=1').send(doc);
    expect(res.status).toBe(200);
    expect(res.body.created).toEqual([expect.objectContaining({ type: 'consumers', name: 'bob' })]);
    expect(res.body.changed).toEqual([expect.objectContaining({ type: 'consumers', name: 'alice', fields: [{ field: 'custom_id', from: 'c-2', to: 'c-3' }] })]);
    expect(res.body.deleted).toEqual([expect.objectContaining({ type: 'acls', name: 'gold' })]);
    expect(await rowCounts()).toEqual(before);
  });

  it('nested entities and references by name load, with ids derived the same way every time', async () => {
    const doc = {
      _format_version: '3.0',
      services: [
        {
          name: 'orders',
          url: 'http://orders.internal',
          routes: [{ name: 'orders-route', paths: ['/orders'], plugins: [{ name: 'key-auth' }] }],
        },
      ],
      routes: [{ name: 'orders-admin', paths: ['/orders-admin'], service: 'orders' }],
      consumers: [{ username: 'carol', keyauth_credentials: [{ key: 'carol-key' }], acls: [{ group: 'silver' }] }],
      plugins: [{ name: 'rate-limiting', consumer: { username: 'carol' }, config: { minute: 5 } }],
    };
    const first = await ok(await http().post('/config').send(doc));
    const ids = (await http().get('/config')).body as Record<string, Array<{ id: string }>>;
    await ok(await http().post('/config').send({ _format_version: '3.0' }));
    await ok(await http().post('/config').send(doc));
    const again = (await http().get('/config')).body as Record<string, Array<{ id: string }>>;
    for (const family of ['services', 'routes', 'plugins', 'consumers', 'keyauth_credentials', 'acls']) {
      expect(again[family]!.map((e) => e.id)).toEqual(ids[family]!.map((e) => e.id));
    }
    expect((first.routes as unknown[]).length).toBe(2);
    const route = (await http().get('/routes/orders-admin')).body;
    const service = (await http().get('/services/orders')).body;
    expect(route.service).toEqual({ id: service.id });
    const plugins = (await http().get('/routes/orders-route/plugins')).body.data;
    expect(plugins.map((p: { name: string }) => p.name)).toEqual(['key-auth']);
    expect((await http().get('/consumers/carol/key-auth/carol-key')).status).toBe(200);
  });

  it('a document with errors changes nothing and names each entity, field and message (?flatten_errors=1)', async () => {
    const before = await rowCounts();
    const versions = h.committed.length;
    const doc = {
      _format_version: '3.0',
      services: [{ name: 'broken', host: 'example.test', port: 'eighty' }],
      routes: [{ name: 'dangling', paths: ['/x'], service: 'missing-service' }],
      consumers: [{ username: 'dave' }, { username: 'dave' }],
    };
    const res = await http().post('/config?flatten_errors=1').send(doc);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(14);
    expect(res.body.name).toBe('invalid declarative configuration');
    expect(res.body.message).toMatch(/^declarative config is invalid: /);
    const flattened = res.body.flattened_errors as Array<{ entity_type: string; entity_name?: string; errors: Array<{ field?: string; message: string; type: string }> }>;
    const of = (type: string, name: string) => flattened.find((e) => e.entity_type === type && e.entity_name === name);
    expect(of('service', 'broken')!.errors).toEqual([{ type: 'field', field: 'port', message: 'expected an integer' }]);
    expect(of('route', 'dangling')!.errors).toEqual([expect.objectContaining({ type: 'field', field: 'service' })]);
    expect(of('consumer', 'dave')!.errors).toEqual([
      { type: 'entity', message: "uniqueness violation: 'consumers' entity with username set to 'dave' already declared" },
    ]);
    expect(await rowCounts()).toEqual(before);
    expect(h.committed.length).toBe(versions);

    const plain = await http().post('/config').send(doc);
    expect(plain.status).toBe(400);
    expect(plain.body.flattened_errors).toBeUndefined();
    expect(plain.body.fields.service.broken.port).toBe('expected an integer');
  });

  it('refuses what is not a document: unknown families, a missing or unknown format version, unparsable text', async () => {
    const unknown = await http().post('/config?flatten_errors=1').send({ _format_version: '3.0', servicez: [] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.flattened_errors[0].errors).toEqual([{ type: 'field', field: 'servicez', message: 'unknown field' }]);
    const noVersion = await http().post('/config?flatten_errors=1').send({ services: [] });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.flattened_errors[0].errors).toEqual([{ type: 'field', field: '_format_version', message: 'required field missing' }]);
    const badYaml = await http().post('/config').set('Content-Type', 'application/yaml').send('services: [unclosed');
    expect(badYaml.status).toBe(400);
    expect(badYaml.body.message).toMatch(/^failed parsing declarative configuration/);
    const polluted = await http().post('/config').set('Content-Type', 'application/json').send('{"_format_version":"3.0","__proto__":{"x":1}}');
    expect(polluted.status).toBe(400);
  });

  it('a failure while writing (a uniqueness only the database sees) rolls the whole document back', async () => {
    const before = await rowCounts();
    const versions = h.committed.length;
    // two keys with the same kid in one set: the (kid, set) uniqueness is the database's
    const doc = {
      _format_version: '3.0',
      key_sets: [{ name: 'dup-set', keys: [{ name: 'k1', kid: 'same', pem: { public_key: RSA_PUBLIC } }, { name: 'k2', kid: 'same', pem: { public_key: RSA_PUBLIC } }] }],
      consumers: [{ username: 'erin' }],
    };
    const res = await http().post('/config?flatten_errors=1').send(doc);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(14);
    expect(res.body.flattened_errors[0].entity_type).toBe('key');
    expect(await rowCounts()).toEqual(before);
    expect(h.committed.length).toBe(versions);
  });
});
