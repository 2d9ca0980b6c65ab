import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness, type BackendName } from './support/admin-harness';

jest.setTimeout(60_000);

/**
 * Decision 35: Kong 3.9's eight protocols on routes and services, and Kong's checks of each protocol family's fields,
 * with Kong's messages (kong/db/schema/entities/routes.lua, routes_subschemas.lua, services.lua).
 */
describe.each<BackendName>(['postgres', 'pglite'])('route and service protocols (%s)', (backend) => {
  let admin: AdminHarness;
  let serviceId: string;
  beforeAll(async () => {
    admin = await startAdmin(backend);
    serviceId = (await admin.http().post('/services').send({ name: 'proto-svc', url: 'http://127.0.0.1:9' })).body.id;
  });
  afterAll(async () => {
    await admin?.close();
  });
  const http = () => admin.http();
  const route = (body: Record<string, unknown>) => http().post('/routes').send({ service: { id: serviceId }, ...body });

  it('accepts services of every Kong protocol, without a path where Kong refuses one', async () => {
    for (const protocol of ['grpc', 'grpcs', 'tcp', 'tls', 'udp', 'tls_passthrough']) {
      const res = await http().post('/services').send({ name: `svc-${protocol.replace('_', '-')}`, protocol, host: 'backend.test', port: 5000 });
      expect([protocol, res.status]).toEqual([protocol, 201]);
      expect(res.body).toMatchObject({ protocol, path: null });
    }
    const grpcUrl = await http().post('/services').send({ name: 'grpc-url', url: 'grpc://backend.test:50051' });
    expect(grpcUrl.status).toBe(201);
    expect(grpcUrl.body).toMatchObject({ protocol: 'grpc', host: 'backend.test', port: 50051, path: null });
  });

  it('refuses a path on grpc, grpcs, tcp, tls and udp services with Kong’s conditional message', async () => {
    const res = await http().post('/services').send({ protocol: 'grpc', host: 'backend.test', path: '/x' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 2,
      name: 'schema violation',
      message: "2 schema violations (failed conditional validation given value of field 'protocol'; path: value must be null)",
      fields: { '@entity': ["failed conditional validation given value of field 'protocol'"], path: 'value must be null' },
    });
    const tcp = await http().post('/services').send({ url: 'tcp://backend.test:9000/path' });
    expect(tcp.body.fields).toEqual({ '@entity': ["failed conditional validation given value of field 'protocol'"], path: 'value must be null' });
  });

  it('refuses the Enterprise ws and wss protocols', async () => {
    const service = await http().post('/services').send({ protocol: 'ws', host: 'backend.test' });
    expect(service.status).toBe(400);
    expect(service.body.fields).toEqual({ protocol: 'expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp' });
    const routeRes = await route({ protocols: ['wss'], paths: ['/ws'] });
    expect(routeRes.status).toBe(400);
    expect(routeRes.body.fields).toEqual({ protocols: ['expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp'] });
  });

  it('accepts routes of each protocol family with their matching fields', async () => {
    const cases: Array<Record<string, unknown>> = [
      { protocols: ['grpc', 'grpcs'], paths: ['/helloworld.Greeter/'] },
      { protocols: ['grpcs'], snis: ['grpc.test'] },
      { protocols: ['tcp', 'tls'], destinations: [{ ip: '10.0.0.0/8', port: 5432 }] },
      { protocols: ['udp'], sources: [{ ip: '192.168.0.1' }] },
      { protocols: ['tls'], snis: ['db.test'] },
      { protocols: ['tls_passthrough'], snis: ['pass.test'] },
      { protocols: ['https'], snis: ['web.test'] },
    ];
    for (const body of cases) {
      const res = await route(body);
      expect([body, res.status, res.body.message]).toEqual([body, 201, undefined]);
      expect(res.body).toMatchObject(body);
    }
    const grpc = await route({ protocols: ['grpc'], hosts: ['grpc.test'] });
    expect(grpc.body.strip_path).toBe(false);
  });

  it('refuses a route mixing protocol families', async () => {
    const expectations: Array<[string[], string]> = [
      [['http', 'grpc'], "('http', 'https'), ('grpc', 'grpcs')"],
      [['https', 'tcp'], "('http', 'https'), ('tcp', 'tls', 'udp')"],
      [['tls', 'tls_passthrough'], "('tcp', 'tls', 'udp'), ('tls_passthrough')"],
    ];
    for (const [protocols, sets] of expectations) {
      const res = await route({ protocols, paths: ['/x'], snis: ['a.test'] });
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual({ protocols: `these sets are mutually exclusive: ${sets}` });
    }
  });

  it('refuses the fields a protocol family does not use, with Kong’s messages', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ protocols: ['http'], paths: ['/a'], sources: [{ ip: '10.0.0.1' }] }, { sources: "cannot set 'sources' when 'protocols' is 'http' or 'https'" }],
      [{ protocols: ['https'], paths: ['/a'], destinations: [{ port: 80 }] }, { destinations: "cannot set 'destinations' when 'protocols' is 'http' or 'https'" }],
      [{ protocols: ['grpc'], paths: ['/a'], methods: ['POST'] }, { methods: "cannot set 'methods' when 'protocols' is 'grpc' or 'grpcs'" }],
      [{ protocols: ['grpcs'], hosts: ['a.test'], strip_path: true }, { strip_path: "cannot set 'strip_path' when 'protocols' is 'grpc' or 'grpcs'" }],
      [{ protocols: ['tcp'], sources: [{ ip: '10.0.0.1' }], paths: ['/a'] }, { paths: "cannot set 'paths' when 'protocols' is 'tcp', 'tls', 'tls_passthrough' or 'udp'" }],
      [{ protocols: ['tls_passthrough'], snis: ['a.test'], hosts: ['a.test'] }, { hosts: "cannot set 'hosts' when 'protocols' is 'tcp', 'tls', 'tls_passthrough' or 'udp'" }],
      [{ protocols: ['http'], headers: { Host: ['a.test'] } }, { headers: "cannot contain 'host' header, which must be specified in the 'hosts' attribute" }],
    ];
    for (const [body, fields] of cases) {
      const res = await route(body);
      expect([body, res.status, res.body.fields]).toEqual([body, 400, fields]);
    }
  });

  it('allows snis only on https, grpcs, tls and tls_passthrough routes', async () => {
    const res = await route({ protocols: ['tcp', 'udp'], snis: ['a.test'] });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual({
      '@entity': ["'snis' can only be set when 'protocols' is 'grpcs', 'https', 'tls' or 'tls_passthrough'"],
      snis: 'length must be 0',
    });
    const plain = await route({ protocols: ['http'], paths: ['/a'], snis: ['a.test'] });
    expect(plain.body.fields['@entity']).toEqual(["'snis' can only be set when 'protocols' is 'grpcs', 'https', 'tls' or 'tls_passthrough'"]);
  });

  it('asks for each family’s matching fields with Kong’s messages', async () => {
    const cases: Array<[string[], string]> = [
      [['http'], "must set one of 'methods', 'hosts', 'headers', 'paths' when 'protocols' is 'http'"],
      [['http', 'https'], "must set one of 'methods', 'hosts', 'headers', 'paths', 'snis' when 'protocols' is 'https'"],
      [['grpc'], "must set one of 'hosts', 'headers', 'paths' when 'protocols' is 'grpc'"],
      [['grpcs'], "must set one of 'hosts', 'headers', 'paths', 'snis' when 'protocols' is 'grpcs'"],
      [['tcp', 'udp'], "must set one of 'sources', 'destinations', 'snis' when 'protocols' is 'tcp', 'tls' or 'udp'"],
      [['tls_passthrough'], "must set snis when 'protocols' is 'tls_passthrough'"],
    ];
    for (const [protocols, message] of cases) {
      const res = await route({ protocols });
      expect([protocols, res.status, res.body.fields]).toEqual([protocols, 400, { '@entity': [message] }]);
    }
  });
});
