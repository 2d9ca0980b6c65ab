import { randomBytes, randomInt } from 'node:crypto';
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
