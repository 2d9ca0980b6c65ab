// Plugins on stream routes through the admin API: those Kong 3.9 allows on tcp/tls/udp (schema `typedefs.protocols`)
// are accepted with stream protocols, the HTTP-only ones (`typedefs.protocols_http`) refused with Kong's message.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createAdminApp, openDatabase, type AdminApp, type Database } from '../src';

describe('plugin protocols on the admin API (PGlite)', () => {
  let database: Database;
  let app: AdminApp;

  beforeAll(async () => {
    database = await openDatabase({});
    app = createAdminApp({ database });
    expect((await request(app).post('/services').send({ name: 'tcp-svc', url: 'tcp://127.0.0.1:9000' })).status).toBe(201);
    expect((await request(app).post('/services/tcp-svc/routes').send({ name: 'tcp-route', protocols: ['tcp'], destinations: [{ port: 9000 }] })).status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await database?.close();
  });

  it.each([
    ['tcp-log', { host: '127.0.0.1', port: 9999 }],
    ['udp-log', { host: '127.0.0.1', port: 9999 }],
    ['file-log', { path: '/tmp/stream.log' }],
    ['http-log', { http_endpoint: 'http://127.0.0.1:9999/logs' }],
    ['syslog', {}],
    ['prometheus', {}],
    ['ip-restriction', { allow: ['127.0.0.1'] }],
  ])('accepts %s on a stream route with stream protocols', async (name, config) => {
    const res = await request(app).post('/routes/tcp-route/plugins').send({ name, protocols: ['tcp', 'tls', 'udp'], config });
    expect(res.status).toBe(201);
    expect(res.body.protocols).toEqual(['tcp', 'tls', 'udp']);
  });

  it('refuses an HTTP-only plugin with a stream protocol, as Kong does', async () => {
    const res = await request(app).post('/routes/tcp-route/plugins').send({ name: 'key-auth', protocols: ['tcp'] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 2,
      name: 'schema violation',
      message: 'schema violation (protocols: expected one of: grpc, grpcs, http, https)',
      fields: { protocols: ['expected one of: grpc, grpcs, http, https'] },
    });
  });

  it('describes each plugin\'s protocols on /schemas/plugins/{name}', async () => {
    const protocolsOf = async (name: string) => {
      const res = await request(app).get(`/schemas/plugins/${name}`);
      return (res.body.fields as Array<Record<string, { elements?: { one_of?: string[] } }>>).find((f) => 'protocols' in f)!.protocols!.elements!.one_of;
    };
    expect(await protocolsOf('tcp-log')).toEqual(['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp']);
    expect(await protocolsOf('key-auth')).toEqual(['grpc', 'grpcs', 'http', 'https']);
  });
});
