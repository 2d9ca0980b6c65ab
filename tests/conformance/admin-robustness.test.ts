import { randomBytes, randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(120_000);

/**
 * Decision (and decision 16): bad input of any kind gets a 4xx with Kong's body, never a 2xx (nothing half-taken) and
 * never a 500. Every request below is malformed, so every answer must be a 4xx.
 */
let admin: AdminHarness;
beforeAll(async () => {
  admin = await startAdmin('postgres');
  await admin.http().post('/consumers').send({ username: 'fuzz-consumer' });
  await admin.http().post('/services').send({ name: 'fuzz-service', url: 'http://fuzz.test' });
  await admin.http().post('/apis').send({ name: 'fuzz-api', uris: ['/fuzz'], upstream_url: 'http://fuzz.test' });
});
afterAll(async () => {
  await admin?.close();
});

const PATHS = [
  '/consumers',
  '/consumers/fuzz-consumer',
  '/services',
  '/services/fuzz-service',
  '/services/fuzz-service/routes',
  '/services/fuzz-service/plugins',
  '/routes',
  '/plugins',
  '/consumers/fuzz-consumer/plugins',
  '/consumers/fuzz-consumer/key-auth',
  '/key-auths',
  '/apis',
  '/apis/fuzz-api',
  '/apis/fuzz-api/plugins',
];

const JSON_BODIES: unknown[] = [
  { id: 'nope' },
  { id: 12 },
  { name: { a: 1 }, username: ['x'], tags: 'a' },
  { tags: [null, 1, {}] },
  { created_at: 'yesterday', updated_at: 1e30 },
  { service: 'abc', route: { name: 42 }, consumer: { id: null } },
  { config: { key_names: 'apikey', anonymous: 7 }, name: 'key-auth' },
  { name: 'key-auth', config: [1, 2] },
  { name: 'request-termination', config: { status_code: 'x', message: 1 } },
  { url: 12, host: '', port: -1, path: 'no-slash', retries: 1e9, protocol: 'gopher' },
  { paths: [1, null], methods: 'get', hosts: {}, headers: { host: 'x' }, strip_path: 'maybe' },
  { key: '', ttl: -5 },
  { username: 'a\u0000b', tags: ['\u0000'] },
  // too large for a unique index entry (incompressible)
  { username: randomBytes(60_000).toString('base64') },
  { uris: 5, upstream_url: 'http://', name: '???' },
  { deeply: { nested: { value: [[[{}]]] } } },
];

const FORM_BODIES = [
  'a[=1&.b=2&c..d=3',
  'paths[-1]=/x&paths[x]=/y',
  'config.key_names[1][2]=a&name=key-auth',
  'username=a&username=b',
  'tags[1]=a&tags=b&tags[]=c',
  '__proto__[x]=1&constructor.prototype.x=2',
  'service.id=&route.id=not-a-uuid',
  '%ZZ=1&name=%E0%A4%A',
];

const isClientError = (status: number) => status >= 400 && status < 500;

describe('every malformed admin request answers a 4xx', () => {
  it('malformed JSON bodies on every collection and entity path', async () => {
    const failures: string[] = [];
    for (const path of PATHS) {
      for (const body of JSON_BODIES) {
        for (const method of ['post', 'put', 'patch'] as const) {
          const res = await admin.http()[method](path).send(body as object);
          if (!isClientError(res.status)) failures.push(`${method.toUpperCase()} ${path} ${JSON.stringify(body).slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('malformed form bodies on every path', async () => {
    const failures: string[] = [];
    for (const path of PATHS) {
      for (const body of FORM_BODIES) {
        for (const method of ['post', 'put', 'patch'] as const) {
          const res = await admin.http()[method](path).type('form').send(body);
          if (!isClientError(res.status)) failures.push(`${method.toUpperCase()} ${path} ${body} → ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('malformed requests: paths, query args, encodings', async () => {
    const requests = [
      admin.http().get('/consumers/%E0%A4%A'),
      admin.http().get('/consumers?size=1&size=x'),
      admin.http().get('/consumers?offset=' + Buffer.from('[1,2]').toString('base64')),
      admin.http().get('/consumers?offset=' + Buffer.from('{"a":1}').toString('base64')),
      admin.http().get('/tags?offset=' + Buffer.from('["a"]').toString('base64')),
      admin.http().get('/consumers?tags=a&tags=b/c'),
      admin.http().post('/consumers').set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('{"a":1}'),
      admin.http().post('/consumers').set('Content-Type', 'multipart/form-data').send('no boundary'),
      admin.http().post('/consumers').set('Content-Type', 'multipart/form-data; boundary=x').send('--x\r\nbroken'),
      admin.http().post('/consumers').set('Content-Type', 'application/json; charset=utf-16').send('{}'),
      admin.http().post('/consumers').set('Content-Type', 'application/json').send('[]'),
      admin.http().post('/consumers').set('Content-Type', 'application/json').send('"text"'),
      admin.http().put('/services/not%2Fa%20name').send({ host: 'x' }),
      admin.http().get('/schemas/plugins/%00'),
      admin.http().get('/consumers/%00'),
      admin.http().put('/consumers/a%00b').send({}),
    ];
    for (const [i, pending] of requests.entries()) {
      const res = await pending;
      expect([i, res.status >= 400 && res.status < 500]).toEqual([i, true]);
    }
    // a tag that cannot exist is an empty list, not a fault
    expect((await admin.http().get('/tags/%00')).body).toEqual({ data: [], next: null });
  });

  it('nothing invalid was stored along the way', async () => {
    const consumers = await admin.http().get('/consumers?size=1000');
    expect(consumers.body.data.map((c: { username: string }) => c.username)).toEqual(['fuzz-consumer']);
  });
});

/** a body sent byte for byte (supertest would serialise a Buffer sent as JSON) */
async function rawPost(path: string, type: string, body: Buffer): Promise<{ status: number; body: unknown }> {
  const server = admin.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    return { status: res.status, body: await res.json() };
  } finally {
    server.close();
  }
}

describe('decision 16: each bound answers its exact status, naming the field', () => {
  const post = (path: string, type: string, body: string | Buffer) => admin.http().post(path).set('Content-Type', type).send(body);

  it('the issue\'s 2xx answers to malformed requests are 400 now', async () => {
    const negative = await admin.http().post('/routes').type('form').send('paths[-1]=/x');
    expect([negative.status, negative.body.fields]).toEqual([400, { paths: 'invalid array index -1: expected 1 to 1000' }]);
    const yesterday = await admin.http().patch('/consumers/fuzz-consumer').send({ created_at: 'yesterday' });
    expect([yesterday.status, yesterday.body.fields]).toEqual([400, { created_at: 'expected an integer' }]);
    const putId = await admin.http().put('/consumers/fuzz-consumer').send({ id: 'nope' });
    expect([putId.status, putId.body.fields]).toEqual([400, { id: 'expected a valid UUID' }]);
    const mixed = await admin.http().patch('/consumers/fuzz-consumer').type('form').send('tags[1]=a&tags=b');
    expect([mixed.status, mixed.body.fields]).toEqual([400, { tags: 'invalid array: mixes indexed and unindexed elements' }]);
  });

  it('strings: 1,024 characters, 64 KiB for key material; NUL bytes anywhere', async () => {
    const long = await admin.http().post('/consumers').send({ username: 'u'.repeat(1025) });
    expect([long.status, long.body.fields]).toEqual([400, { username: 'length must be at most 1024' }]);
    const tag = await admin.http().post('/consumers').send({ username: 'tagged', tags: ['t'.repeat(2000)] });
    expect([tag.status, tag.body.fields]).toEqual([400, { tags: ['length must be at most 1024'] }]);
    const huge = await admin.http().post('/services').send({ name: 'huge', host: 'h'.repeat(70_000) });
    expect([huge.status, huge.body.fields]).toEqual([400, { host: 'length must be at most 65536' }]);
    const nul = await admin.http().post('/services/fuzz-service/plugins').send({ name: 'key-auth', config: { key_names: ['ok', 'a\u0000b'] } });
    expect([nul.status, nul.body.fields]).toEqual([400, { config: { key_names: ['must not contain a NUL byte'] } }]);
    const nulForm = await admin.http().post('/consumers').type('form').send('username=a%00b');
    expect([nulForm.status, nulForm.body.fields]).toEqual([400, { username: 'must not contain a NUL byte' }]);
  });

  it('arrays: 1,000 elements; nesting: 64 levels (decision 26); prototype keys', async () => {
    const paths = await admin.http().post('/services/fuzz-service/routes').send({ paths: new Array(1001).fill('/p') });
    expect([paths.status, paths.body.fields]).toEqual([400, { paths: 'length must be at most 1000' }]);
    const deep = await post('/consumers', 'application/json', `{"username":"deep","tags":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    expect([deep.status, deep.body]).toEqual([400, { message: 'request body nests too deeply (limit 64)' }]);
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const res = await post('/consumers', 'application/json', `{"username":"p","config":{"${key}":{"x":1}}}`);
      expect(res.status).toBe(400);
      expect(Object.entries(res.body.fields.config)).toEqual([[key, 'field name not allowed']]);
    }
  });

  it('bodies: 4 MiB (413), UTF-8 only, named multipart parts', async () => {
    const big = await post('/consumers', 'application/json', `{"username":"${'b'.repeat(4 * 1024 * 1024)}"}`);
    expect([big.status, big.body]).toEqual([413, { message: 'Request size limit exceeded' }]);
    const bytes = Buffer.concat([Buffer.from('{"username":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(await rawPost('/consumers', 'application/json', bytes)).toEqual({ status: 400, body: { message: 'Request body is not valid UTF-8' } });
    const form = await post('/consumers', 'application/x-www-form-urlencoded', 'username=%ff');
    expect([form.status, form.body]).toEqual([400, { message: 'Request body is not valid UTF-8' }]);
    const nameless = await post('/consumers', 'multipart/form-data; boundary=B', '--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--\r\n');
    expect([nameless.status, nameless.body]).toEqual([400, { message: 'Cannot parse multipart body: a part has no name' }]);
    const truncated = await post('/consumers', 'multipart/form-data; boundary=B', '--B\r\nContent-Disposition: form-data; name="username"; filename="u"\r\n\r\ncut');
    expect(truncated.status).toBe(400);
    const latin = Buffer.concat([Buffer.from('--B\r\nContent-Disposition: form-data; name="username"\r\n\r\n'), Buffer.from([0xe9]), Buffer.from('\r\n--B--\r\n')]);
    expect(await rawPost('/consumers', 'multipart/form-data; boundary=B', latin)).toEqual({ status: 400, body: { message: 'Request body is not valid UTF-8' } });
    // UTF-8 text in a multipart field is read as it is
    const utf8 = await admin.http().post('/consumers').field('username', 'zoë-🦀');
    expect([utf8.status, utf8.body.username]).toEqual([201, 'zoë-🦀']);
    expect((await admin.http().delete(`/consumers/${encodeURIComponent('zoë-🦀')}`)).status).toBe(204);
  });
});

describe("RBAC's own routes hold the same bounds (decision 16)", () => {
  let rbac: RbacHarness;
  beforeAll(async () => {
    rbac = await startRbacAdmin({ mode: 'off' });
  });
  afterAll(async () => {
    await rbac?.close();
  });

  /** `n` letters from the CJK block, random, so that Postgres cannot compress them into an index entry */
  const cjk = (n: number) => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + randomInt(0x5000))).join('');

  it('a name past 1,024 characters, or past 64 KiB, is a 400 naming it', async () => {
    for (const name of ['r'.repeat(1025), 'r'.repeat(1024 * 1024)]) {
      const res = await rbac.http().post('/rbac/roles').send({ name });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.fields)).toEqual(['name']);
    }
    const user = await rbac.http().post('/rbac/users').send({ name: 'u'.repeat(5000), user_token: 'user-token-0123456789' });
    expect(user.status).toBe(400);
    expect(user.body.fields).toEqual({ name: 'length must be at most 1024' });
  });

  it('1,024 multi-byte characters too large for the unique index are a 400, not a 500', async () => {
    const name = cjk(1024);
    const res = await rbac.http().post('/rbac/roles').send({ name });
    expect([res.status, res.body.name]).toEqual([400, 'schema violation']);
    const users = await rbac.http().post('/rbac/users').send({ name: cjk(1024), user_token: 'user-token-0123456789' });
    expect(users.status).toBe(400);
    expect((await rbac.http().get('/rbac/roles')).body.data.map((r: { name: string }) => r.name)).not.toContain(name);
  });

  it('NUL bytes and prototype keys in RBAC bodies are a 400', async () => {
    expect((await rbac.http().post('/rbac/roles').send({ name: 'a\u0000b' })).body.fields).toEqual({ name: 'must not contain a NUL byte' });
    const proto = await rbac.http().post('/rbac/roles').set('Content-Type', 'application/json').send('{"name":"r1","__proto__":{"is_default":true}}');
    expect(proto.status).toBe(400);
    expect(Object.entries(proto.body.fields)).toEqual([['__proto__', 'field name not allowed']]);
  });
});
