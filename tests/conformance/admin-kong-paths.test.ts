import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { request as httpsRequest } from 'node:https';
import { controlPlaneMigrations, keyringFromSecret, oauth2TokensExtension, proxyCacheExtension, startAdminServer, tlsExtension } from '@gatehouse/control-plane';
import { localCacheAdmin, MemoryCacheStore, MemoryTokenStore } from '@gatehouse/plugins';
import { currentLogLevel, createLogger } from '../../packages/cli/src/logger';
import { logLevelControl, openOperationsChannel } from '../../packages/cli/src/operations-channel';
import { readSettings } from '../../packages/cli/src/settings';
import { CertificateFactory } from '../support/certificates';
import { startAdmin, type AdminHarness } from './support/admin-harness';

jest.setTimeout(60_000);

/** Kong 3.9's admin paths beyond the entity families: cache, debug log levels, endpoints, timers, DNS status, wasm, client_certificate, oauth2 tokens. */
let admin: AdminHarness;
const cache = new MemoryCacheStore(1 << 20);
const http = () => admin.http();

beforeAll(async () => {
  const settings = readSettings({}, 'all');
  const log = createLogger('info', 'test');
  const channel = openOperationsChannel(settings, 'x'.repeat(32), 'node-1', log);
  admin = await startAdmin('pglite', {
    extensions: [tlsExtension(keyringFromSecret('kong-paths-keyring-secret-0123456789')), oauth2TokensExtension(new MemoryTokenStore()), proxyCacheExtension(localCacheAdmin(cache))],
    logLevel: logLevelControl(channel, 'node-1', false),
    configuration: { database: 'postgres', pg_host: 'db.internal', router_flavor: 'traditional_compatible' },
    log: () => {},
  }, controlPlaneMigrations());
});
afterAll(async () => {
  await admin?.close();
});

describe('GET /', () => {
  it("carries Kong's configuration keys given by the node", async () => {
    const res = await http().get('/');
    expect(res.body.configuration).toMatchObject({ database: 'postgres', pg_host: 'db.internal', router_flavor: 'traditional_compatible' });
    expect(res.body.configuration.admin_listeners[0]).toMatchObject({ port: 8001 });
  });
});

describe('/cache', () => {
  it('reads and purges what the proxy caches', async () => {
    cache.set('k1', { status: 200, headers: {}, body: Buffer.from('hello'), at: Date.now() / 1000, ttl: 60 }, 60);
    cache.set('k2', { status: 200, headers: {}, body: Buffer.from('bye'), at: Date.now() / 1000, ttl: 60 }, 60);
    expect((await http().get('/cache/k1')).body).toMatchObject({ key: 'k1', body: 'hello' });
    expect((await http().delete('/cache/k1')).status).toBe(204);
    expect((await http().get('/cache/k1')).status).toBe(404);
    // absent keys are purged all the same, as Kong
    expect((await http().delete('/cache/never')).status).toBe(204);
    expect((await http().delete('/cache')).status).toBe(204);
    expect(cache.get('k2')).toBeNull();
  });
});

describe('/debug/node/log-level', () => {
  it("reads and changes the node's level with Kong's messages", async () => {
    expect((await http().get('/debug/node/log-level')).body).toEqual({ message: 'log level: info' });
    expect((await http().put('/debug/node/log-level/info')).body).toEqual({ message: 'log level is already info' });
    const changed = await http().put('/debug/node/log-level/debug?timeout=0');
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ message: 'log level changed' });
    expect(currentLogLevel()).toBe('debug');
    expect((await http().get('/debug/node/log-level')).body).toEqual({ message: 'log level: debug' });
  });

  it('comes back to the configured level after the timeout', async () => {
    expect((await http().put('/debug/cluster/log-level/notice').send({ timeout: 1 })).status).toBe(200);
    expect(currentLogLevel()).toBe('notice');
    const until = Date.now() + 10_000;
    while (currentLogLevel() !== 'info' && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(currentLogLevel()).toBe('info');
  });

  it('refuses unknown levels and negative timeouts', async () => {
    expect((await http().put('/debug/node/log-level/loud')).body).toEqual({ message: 'unknown log level: loud' });
    const negative = await http().put('/debug/cluster/control-planes-nodes/log-level/warn?timeout=-1');
    expect(negative.status).toBe(400);
    expect(negative.body).toEqual({ message: 'timeout must be greater than or equal to 0' });
  });
});

describe('node paths', () => {
  it("/endpoints lists every path template in Kong's order", async () => {
    const res = await http().get('/endpoints');
    expect(res.status).toBe(200);
    const data = res.body.data as string[];
    expect(data).toEqual(expect.arrayContaining(['/', '/cache/{cache}', '/services/{services}', '/services/{services}/routes', '/debug/node/log-level', '/timers', '/status/dns']));
    expect(data.indexOf('/services/{services}')).toBeLessThan(data.indexOf('/services/{services}/routes'));
    expect(data.indexOf('/routes')).toBeLessThan(data.indexOf('/routes/{routes}'));
  });

  it("/timers answers Kong's shape", async () => {
    const res = await http().get('/timers');
    expect(res.body).toMatchObject({ worker: { id: 0, count: 1 }, stats: { sys: { running: 0 }, timers: {}, flamegraph: {} } });
    expect(typeof res.body.stats.sys.pending).toBe('number');
    expect(typeof res.body.stats.event_loop.delay_ms.p99).toBe('number');
  });

  it("/status/dns answers as Kong's new DNS client: the worker and the statistics per name and type", async () => {
    const res = await http().get('/status/dns');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ worker: { id: 0, count: 1 }, stats: expect.any(Object) });
  });

  it('filter chains answer as Kong with wasm = off', async () => {
    for (const [method, path] of [['get', '/filter-chains'], ['post', '/filter-chains'], ['get', '/routes/r/filters/enabled'], ['delete', '/services/s/filter-chains/f']] as const) {
      const res = await http()[method](path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'this endpoint is only available when wasm is enabled' });
    }
    expect((await http().get('/schemas/filters/x')).body).toEqual({ message: "Filter 'x' not found" });
  });
});

describe('/{child}/{id}/{parent} methods', () => {
  it('PATCH updates the referenced service, PUT upserts it, DELETE is 405', async () => {
    const svc = (await http().post('/services').send({ name: 'ref-svc', url: 'http://a.test' })).body;
    const route = (await http().post('/routes').send({ name: 'ref-route', paths: ['/r'], service: { id: svc.id } })).body;
    const patched = await http().patch(`/routes/${route.id}/service`).send({ retries: 3 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: svc.id, retries: 3 });
    expect((await http().delete(`/routes/${route.id}/service`)).status).toBe(405);
    const lone = (await http().post('/routes').send({ name: 'lone-route', paths: ['/l'] })).body;
    expect((await http().patch(`/routes/${lone.id}/service`).send({ retries: 1 })).status).toBe(404);
    const put = await http().put(`/routes/${lone.id}/service`).send({ name: 'made-for-lone', host: 'b.test' });
    expect(put.status).toBe(200);
    expect((await http().get(`/routes/${lone.id}`)).body.service).toEqual({ id: put.body.id });
  });
});

describe('client_certificate routes', () => {
  it('reach the certificate a service presents, and the services presenting one', async () => {
    const factory = new CertificateFactory();
    const pem = factory.selfSigned(['client.test']);
    factory.cleanup();
    const cert = (await http().post('/certificates').send({ cert: pem.cert, key: pem.key })).body;
    expect(cert).toHaveProperty('id');
    const svc = await http().post(`/certificates/${cert.id}/services`).send({ name: 'mtls-svc', url: 'https://up.test' });
    expect(svc.status).toBe(201);
    expect(svc.body.client_certificate).toEqual({ id: cert.id });
    expect((await http().get(`/services/mtls-svc/client_certificate`)).body.id).toBe(cert.id);
    const listed = await http().get(`/certificates/${cert.id}/services`);
    expect(listed.body.data.map((s: { name: string }) => s.name)).toEqual(['mtls-svc']);
    expect((await http().get(`/certificates/${cert.id}/services/mtls-svc`)).status).toBe(200);
    expect((await http().get(`/certificates/${cert.id}/services/ref-svc`)).status).toBe(404);
    expect((await http().get('/services/ref-svc/client_certificate')).status).toBe(404);
    expect((await http().get(`/certificates/${cert.id}/upstreams`)).body).toEqual({ data: [], next: null });
  });
});

describe('oauth2 token routes', () => {
  it('create, update and reach a token through its credential and service', async () => {
    await http().post('/consumers').send({ username: 'tok-user' });
    const cred = (await http().post('/consumers/tok-user/oauth2').send({ name: 'app', redirect_uris: ['https://app.test/cb'] })).body;
    const svc = (await http().post('/services').send({ name: 'tok-svc', url: 'http://t.test' })).body;
    const created = await http().post('/oauth2_tokens').send({ credential: { id: cred.id }, service: { id: svc.id }, expires_in: 600, access_token: 'my-access-token' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ access_token: 'my-access-token', expires_in: 600, token_type: 'bearer' });
    expect(typeof created.body.refresh_token).toBe('string');
    const id = created.body.id as string;
    expect((await http().get('/oauth2_tokens/my-access-token')).body.id).toBe(id);
    const patched = await http().patch(`/oauth2_tokens/${id}`).send({ scope: 'read' });
    expect(patched.body).toMatchObject({ id, scope: 'read', expires_in: 600 });
    // the token keeps working: it is found by the access token it had
    expect((await http().get('/oauth2_tokens/my-access-token')).body.scope).toBe('read');
    expect((await http().get(`/oauth2_tokens/${id}/credential`)).body.id).toBe(cred.id);
    expect((await http().get(`/oauth2_tokens/${id}/service`)).body.id).toBe(svc.id);
    expect((await http().get(`/oauth2/${cred.id}/oauth2_tokens`)).body.data.map((t: { id: string }) => t.id)).toEqual([id]);
    expect((await http().get(`/services/tok-svc/oauth2_tokens`)).body.data).toHaveLength(1);
    const refused = await http().post('/oauth2_tokens').send({ credential: { id: svc.id } });
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toHaveProperty('credential');
  });
});

describe('admin API over TLS', () => {
  it("serves the admin API on a TLS listener (Kong's admin_listen … ssl)", async () => {
    const factory = new CertificateFactory();
    const pem = factory.selfSigned(['localhost']);
    factory.cleanup();
    const server = await startAdminServer(admin.app, '127.0.0.1:0', pem);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port: server.port, path: '/status', rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
