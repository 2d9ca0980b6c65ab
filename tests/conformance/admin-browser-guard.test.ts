import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { createAdminApp, createRbac, openDatabase, parseAdminHosts, rbacMigrations, type AdminApp, type AdminAppDeps, type Database } from '@gatehouse/control-plane';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testkit';

jest.setTimeout(90_000);

/**
 * Decision 27: browsers cannot drive the admin API. Before any handler and on every method, a request from an origin
 * that is neither the admin API's own nor listed answers 403 and changes nothing, as does one a browser marks
 * cross-site or same-site without an allowed Origin; with a loopback listener a foreign Host answers 421. Clients that
 * send no Origin are unaffected. With RBAC off and on (the guard answers before RBAC asks for a token).
 */
const LISTED = 'https://manager.example.test';
const TOKEN = 'browser-guard-admin-token-5c1e';
const REFUSED = { message: 'Cross-origin request refused' };
const MISDIRECTED = { message: 'Misdirected request' };
const HOST = '127.0.0.1:8001';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase('gh_browser');
  database = await openDatabase({ url: testDb.url, poolSize: 4, migrations: rbacMigrations() });
});
afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});

async function adminApp(mode: 'off' | 'on', deps: Partial<AdminAppDeps> = {}): Promise<AdminApp> {
  const rbac = createRbac({ db: database.db, mode, adminToken: TOKEN, log: () => {} });
  await rbac.bootstrap();
  return createAdminApp({ database, middleware: rbac.middleware, extensions: [rbac.extension], adminGuiOrigins: [LISTED], log: () => {}, ...deps });
}

describe.each(['off', 'on'] as const)('RBAC %s', (mode) => {
  let app: AdminApp;
  beforeAll(async () => {
    app = await adminApp(mode);
  });
  /** a request as the admin's operator would send it: the admin's own Host, the token when RBAC asks for one */
  const call = (method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options', path: string) => {
    const req = request(app)[method](path).set('Host', HOST);
    return mode === 'on' ? req.set('Kong-Admin-Token', TOKEN) : req;
  };
  const consumerExists = async (name: string) => (await call('get', `/consumers/${name}`)).status === 200;

  it('a page on another origin posting a form or text/plain: 403, nothing written', async () => {
    const form = await call('post', '/consumers').set('Origin', 'https://evil.example.test').type('form').send(`username=form-${mode}`);
    expect([form.status, form.body]).toEqual([403, REFUSED]);
    const text = await call('post', '/consumers').set('Origin', 'https://evil.example.test').set('Content-Type', 'text/plain').send(`{"username":"text-${mode}"}`);
    expect([text.status, text.body]).toEqual([403, REFUSED]);
    expect(await consumerExists(`form-${mode}`)).toBe(false);
    expect(await consumerExists(`text-${mode}`)).toBe(false);
    expect(corsHeaders(form.headers)).toEqual({});
  });

  it('every method and every path, the preflight included, for any unlisted origin, `null` included', async () => {
    const kept = await call('post', '/consumers').send({ username: `kept-${mode}` });
    expect(kept.status).toBe(201);
    const origins = ['https://evil.example.test', 'null', 'http://manager.example.test', 'https://manager.example.test.evil.test', 'file://', 'not an origin', 'http://127.0.0.1:8002', 'http://localhost:8001'];
    const attempts: Array<[typeof origins[number], 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options', string]> = [];
    for (const origin of origins) {
      attempts.push([origin, 'get', '/consumers'], [origin, 'delete', `/consumers/kept-${mode}`], [origin, 'patch', `/consumers/kept-${mode}`], [origin, 'put', `/consumers/put-${mode}`]);
      attempts.push([origin, 'options', '/consumers'], [origin, 'get', '/nowhere'], [origin, 'get', '/']);
    }
    for (const [origin, method, path] of attempts) {
      const res = await call(method, path).set('Origin', origin).set('Access-Control-Request-Method', 'POST').send({ custom_id: 'changed' });
      expect([origin, method, path, res.status, res.body]).toEqual([origin, method, path, 403, REFUSED]);
    }
    const after = await call('get', `/consumers/kept-${mode}`);
    expect([after.status, after.body.custom_id]).toEqual([200, null]);
    expect(await consumerExists(`put-${mode}`)).toBe(false);
  });

  it('Sec-Fetch-Site cross-site or same-site without an allowed Origin: 403 (a form, an image, a link elsewhere)', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const read = await call('get', '/consumers').set('Sec-Fetch-Site', site);
      expect([site, read.status, read.body]).toEqual([site, 403, REFUSED]);
      const write = await call('post', '/consumers').set('Sec-Fetch-Site', site).type('form').send(`username=site-${mode}`);
      expect([site, write.status]).toEqual([site, 403]);
      const foreign = await call('post', '/consumers').set('Sec-Fetch-Site', site).set('Origin', 'https://evil.example.test').send({ username: `site-${mode}` });
      expect([site, foreign.status]).toEqual([site, 403]);
    }
    expect(await consumerExists(`site-${mode}`)).toBe(false);
    for (const site of ['same-origin', 'none']) expect((await call('get', '/consumers').set('Sec-Fetch-Site', site)).status).toBe(200);
  });

  it('a listed origin works, cross-site as browsers mark it, with its CORS headers', async () => {
    const pre = await call('options', '/consumers').set('Origin', LISTED).set('Sec-Fetch-Site', 'cross-site').set('Access-Control-Request-Method', 'POST');
    expect([pre.status, pre.headers['access-control-allow-origin']]).toEqual([204, LISTED]);
    const made = await call('post', '/consumers').set('Origin', LISTED).set('Sec-Fetch-Site', 'cross-site').send({ username: `listed-${mode}` });
    expect([made.status, made.headers['access-control-allow-origin'], made.headers['access-control-allow-credentials']]).toEqual([201, LISTED, 'true']);
  });

  it("the admin API's own origin (its pages, /docs) works", async () => {
    const own = [[HOST, `http://${HOST}`], ['localhost:8001', 'http://localhost:8001'], ['[::1]:8001', 'http://[::1]:8001']] as const;
    for (const [i, [host, origin]] of own.entries()) {
      const res = await request(app).post('/consumers').set('Host', host).set('Origin', origin).set('Sec-Fetch-Site', 'same-origin').set('Kong-Admin-Token', TOKEN).send({ username: `own-${mode}-${i}` });
      expect([origin, res.status]).toEqual([origin, 201]);
    }
  });

  it('requests without Origin (scripts, decK, curl) are unaffected', async () => {
    const res = await call('post', '/consumers').type('form').send(`username=script-${mode}`);
    expect(res.status).toBe(201);
    expect((await call('delete', `/consumers/script-${mode}`)).status).toBe(204);
  });

  it('a foreign Host on a loopback listener: 421 before anything else, nothing written (DNS rebinding)', async () => {
    for (const host of ['evil.example.test:8001', 'evil.example.test', '10.0.0.1:8001', 'localhost.evil.test:8001', '127.0.0.1.evil.test', 'bad host']) {
      const read = await call('get', '/consumers').set('Host', host);
      expect([host, read.status, read.body]).toEqual([host, 421, MISDIRECTED]);
      const write = await request(app).post('/consumers').set('Host', host).set('Origin', `http://${host}`).send({ username: `rebound-${mode}` });
      expect([host, write.status, write.body]).toEqual([host, 421, MISDIRECTED]);
    }
    expect(await consumerExists(`rebound-${mode}`)).toBe(false);
    for (const host of ['127.0.0.1:8001', '127.9.9.9', 'localhost', 'LOCALHOST:8001', 'admin.localhost:8001', '[::1]:8001']) {
      expect([host, (await call('get', '/consumers').set('Host', host)).status]).toEqual([host, 200]);
    }
  });
});

describe('GATEHOUSE_ADMIN_HOSTS', () => {
  it('adds host names a loopback listener answers to, by name (any port) or name:port', async () => {
    const app = await adminApp('off', { adminHosts: parseAdminHosts('Admin.Internal, gateway.test:8001') });
    const status = async (host: string) => (await request(app).get('/consumers').set('Host', host)).status;
    expect(await status('admin.internal:9000')).toBe(200);
    expect(await status('ADMIN.INTERNAL')).toBe(200);
    expect(await status('gateway.test:8001')).toBe(200);
    expect(await status('gateway.test:8002')).toBe(421);
    expect(await status('other.internal')).toBe(421);
    // the listed host's own origin is the admin API's own
    const own = await request(app).post('/consumers').set('Host', 'admin.internal:8001').set('Origin', 'http://admin.internal:8001').send({ username: 'own-listed-host' });
    expect(own.status).toBe(201);
  });

  it('is comma-separated host names, empty by default; anything else is refused', () => {
    expect(parseAdminHosts(undefined)).toEqual([]);
    expect(parseAdminHosts(' a.test , B.test:8001 ')).toEqual(['a.test', 'b.test:8001']);
    expect(() => parseAdminHosts('http://a.test')).toThrow(/not a host name/);
    expect(() => parseAdminHosts('a.test/path')).toThrow(/not a host name/);
  });

  it('Host is not checked when the admin API listens beyond loopback; Origin still is', async () => {
    const app = await adminApp('off', { adminListen: ['0.0.0.0:8001'] });
    expect((await request(app).get('/consumers').set('Host', 'gateway.example.test:8001')).status).toBe(200);
    const own = await request(app).post('/consumers').set('Host', 'gateway.example.test:8001').set('Origin', 'http://gateway.example.test:8001').send({ username: 'own-exposed' });
    expect(own.status).toBe(201);
    const foreign = await request(app).post('/consumers').set('Host', 'gateway.example.test:8001').set('Origin', 'http://evil.example.test').send({ username: 'foreign-exposed' });
    expect([foreign.status, foreign.body]).toEqual([403, REFUSED]);
  });
});

function corsHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-allow-')));
}
