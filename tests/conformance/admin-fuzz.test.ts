/**
 * The admin API under generated hostile input (issue 9, decision 16), on both databases: every entity path and every
 * plugin config receives wrong types, huge strings and arrays, NUL bytes and invalid UTF-8, deep nesting,
 * prototype-pollution keys, broken multipart and wrong content types, as JSON, form and multipart bodies.
 * Rules: no answer is a 5xx, and a refused write leaves nothing behind (every table's row count and the config
 * version are what they were before it).
 *
 * Most requests carry at least one defect that must be refused whatever the endpoint (a NUL byte, a
 * prototype-pollution key, nesting past 32 levels, an array past 1,000 elements, a string past 64 KiB, bytes that
 * are not UTF-8, a nameless or truncated multipart part, an array index out of range, an unsupported content type):
 * those must all answer a 4xx, and the database state (every table's row count and the config version, read in one
 * query) is compared every 50 of them. The other requests (wrong types, odd charsets, nothing certainly wrong) may be
 * accepted; the state is read right before and right after each of them, so a refused one is checked on its own.
 *
 * Seeded: GATEHOUSE_FUZZ_SEED (default fixed) and GATEHOUSE_FUZZ_REQUESTS per database (default 5,000, so 10,000
 * over both); a failure names the seed and the request number, so `GATEHOUSE_FUZZ_SEED=<seed>` replays it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
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
} from '@gatehouse/control-plane';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testkit';

// generous for a loaded machine; on a quiet one each database's run takes well under half a minute
jest.setTimeout(300_000);

const SEED = Number(process.env.GATEHOUSE_FUZZ_SEED ?? 0x9a7e5eed) >>> 0;
const REQUESTS = Number(process.env.GATEHOUSE_FUZZ_REQUESTS ?? 5000);
/** certainly-refused requests between two reads of the database state */
const WINDOW = 50;

// ── a small seeded PRNG (mulberry32) ─────────────────────────────────────────

class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

// ── hostile values, as JSON text (so that `__proto__` keys and deep nesting survive serialisation) ──────────

const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];
const SHORT_STRINGS = ['', 'x', 'fz', '/x', '~/(a+)+$', 'http://fz.test', '0', 'true', 'null', '*', '../..', '%00', 'ümlaut', '🦀'];

function deepJson(rng: Rng): string {
  const depth = rng.pick([33, 64, 500, 5000]);
  const open = rng.chance(0.5) ? '[' : '{"a":';
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

function hostileJson(rng: Rng, fieldNames: readonly string[], depth = 0): string {
  const kind = rng.int(0, depth > 2 ? 9 : 13);
  switch (kind) {
    case 0:
      return JSON.stringify(rng.pick([0, -1, 1e308, -0.5, 2 ** 53, 65536, 3.14]));
    case 1:
      return rng.pick(['true', 'false', 'null']);
    case 2:
      return JSON.stringify(rng.pick(SHORT_STRINGS));
    case 3:
      return JSON.stringify('s'.repeat(rng.pick([1025, 5000, 66_000])));
    case 4:
      return JSON.stringify(`${rng.pick(SHORT_STRINGS)}\u0000${rng.pick(SHORT_STRINGS)}`);
    case 5:
      return JSON.stringify(new Array(rng.pick([1001, 2000])).fill(rng.pick(['a', '/p', 1])));
    case 6:
      return deepJson(rng);
    case 7:
      return JSON.stringify('0e5d3c4b-aaaa-4bbb-8ccc-' + String(rng.int(0, 999999999999)).padStart(12, '0'));
    case 8:
      return JSON.stringify({ id: rng.pick(['nope', '0e5d3c4b-aaaa-4bbb-8ccc-000000000001', 12]) });
    case 9:
      return '[]';
    case 10:
    case 11: {
      const entries: string[] = [];
      for (let i = rng.int(1, 3); i > 0; i--) entries.push(`${JSON.stringify(hostileKey(rng, fieldNames))}:${hostileJson(rng, fieldNames, depth + 1)}`);
      return `{${entries.join(',')}}`;
    }
    default: {
      const items: string[] = [];
      for (let i = rng.int(1, 3); i > 0; i--) items.push(hostileJson(rng, fieldNames, depth + 1));
      return `[${items.join(',')}]`;
    }
  }
}

function hostileKey(rng: Rng, fieldNames: readonly string[]): string {
  const roll = rng.next();
  if (roll < 0.6 && fieldNames.length) return rng.pick(fieldNames);
  if (roll < 0.75) return rng.pick(FORBIDDEN_KEYS);
  if (roll < 0.82) return `a\u0000b`;
  if (roll < 0.86) return 'k'.repeat(1025);
  return rng.pick(['config', 'name', 'tags', 'id', 'created_at', 'x', '']);
}

/** a JSON object body: mostly the target's own fields, with hostile values */
function jsonBody(rng: Rng, fieldNames: readonly string[], extra: Record<string, string> = {}): string {
  const entries = Object.entries(extra).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
  for (let i = rng.int(1, 4); i > 0; i--) entries.push(`${JSON.stringify(hostileKey(rng, fieldNames))}:${hostileJson(rng, fieldNames)}`);
  return `{${entries.join(',')}}`;
}

const INVALID_UTF8 = [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xe0, 0xa4]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80])];

function withInvalidUtf8(rng: Rng, text: string): Buffer {
  const at = rng.int(0, text.length);
  return Buffer.concat([Buffer.from(text.slice(0, at)), rng.pick(INVALID_UTF8), Buffer.from(text.slice(at))]);
}

function formKey(rng: Rng, fieldNames: readonly string[]): string {
  const base = fieldNames.length && rng.chance(0.7) ? rng.pick(fieldNames) : hostileKey(rng, fieldNames);
  return (
    base +
    rng.pick(['', '', '[]', '[1]', '[-1]', '[0]', '[1001]', '[99999999999999999999]', '[x]', '.a', '.__proto__', '[1][2]', '[', '..', '.', `${'[1]'.repeat(40)}`])
  );
}

function formValue(rng: Rng): string {
  return rng.pick(['', 'x', '%00', 'a%00b', '%ff', '%e0%a4%a', '%zz', 'v'.repeat(rng.pick([10, 1025, 66_000])), '-1', 'true', '1e999', '/x']);
}

function formBody(rng: Rng, fieldNames: readonly string[], extra: Record<string, string> = {}): string {
  const pairs = Object.entries(extra).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  const count = rng.chance(0.1) ? rng.int(1001, 1500) : rng.int(1, 5);
  const key = formKey(rng, fieldNames);
  if (count > 10) for (let i = 0; i < count; i++) pairs.push(`${key}=${rng.pick(['', 'x', '%00', '1'])}`);
  else for (let i = 0; i < count; i++) pairs.push(`${formKey(rng, fieldNames)}=${formValue(rng)}`);
  return pairs.join('&');
}

function multipartBody(rng: Rng, fieldNames: readonly string[], extra: Record<string, string>, certain: boolean): { type: string; body: Buffer; broken: boolean } {
  const boundary = `fz${rng.int(0, 1e9)}`;
  const parts: Buffer[] = [];
  const part = (headers: string, value: Buffer | string) => parts.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n'));
  for (const [k, v] of Object.entries(extra)) part(`Content-Disposition: form-data; name="${k}"`, v);
  for (let i = rng.int(1, 3); i > 0; i--) part(`Content-Disposition: form-data; name="${formKey(rng, fieldNames)}"`, formValue(rng));
  let truncated = false;
  let type = `multipart/form-data; boundary=${boundary}`;
  if (certain) {
    const name = rng.pick(fieldNames.length ? fieldNames : ['name']);
    switch (rng.int(0, 7)) {
      case 0:
        part('Content-Disposition: form-data', 'a part without a name');
        break;
      case 1:
        part('Content-Disposition: form-data; filename="x.pem"', 'a file without a name');
        break;
      case 2:
        part(`Content-Disposition: form-data; name="${name}"`, withInvalidUtf8(rng, 'value'));
        break;
      case 3:
        part(`Content-Disposition: form-data; name="${name}"; filename="k.pem"`, withInvalidUtf8(rng, '-----BEGIN'));
        break;
      case 4:
        part(`Content-Disposition: form-data; name="${name}"`, 'a\u0000b');
        break;
      case 5:
        part('Content-Disposition: form-data; name="__proto__.polluted"', 'yes');
        break;
      case 6:
        truncated = true;
        if (rng.chance(0.5)) part(`Content-Disposition: form-data; name="${name}"; filename="k.pem"`, 'cut');
        break;
      default:
        type = rng.pick(['multipart/form-data', 'multipart/form-data; boundary=']);
    }
  }
  if (!truncated) parts.push(Buffer.from(`--${boundary}--\r\n`));
  else parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="x"\r\n\r\nno end`));
  return { type, body: Buffer.concat(parts), broken: certain };
}

// ── one defect that no endpoint may accept, per encoding ──────────────────────────────────────────────────────

function jsonDefect(rng: Rng): { entry?: string; invalidUtf8?: boolean } {
  switch (rng.int(0, 7)) {
    case 0:
      return { entry: `${JSON.stringify(rng.pick(FORBIDDEN_KEYS))}:${rng.pick(['{"polluted":true}', '1', '"x"'])}` };
    case 1:
      return { entry: `"tags":${JSON.stringify(['ok', `n\u0000ul`])}` };
    case 2:
      return { entry: `${JSON.stringify(`na\u0000me`)}:1` };
    case 3:
      return { entry: `"name":${JSON.stringify('s'.repeat(rng.pick([65_537, 100_000])))}` };
    case 4:
      return { entry: `"tags":${JSON.stringify(new Array(rng.pick([1001, 2000])).fill('t'))}` };
    case 5:
      return { entry: `"config":${deepJson(rng)}` };
    case 6:
      return { entry: `${JSON.stringify('k'.repeat(1025))}:1` };
    default:
      return { invalidUtf8: true };
  }
}

function formDefect(rng: Rng): string {
  return rng.pick([
    'name=a%00b',
    'tags%5B%5D=%00',
    '__proto__.polluted=1',
    'constructor.prototype.x=1',
    'paths[-1]=/x',
    'paths[0]=/x',
    'paths[1001]=/x',
    'tags[1]=a&tags=b',
    'tags[2]=a&tags[2]=b',
    `name=${'v'.repeat(65_537)}`,
    'name=%ff',
    'name=%c3%28',
    new Array(1001).fill('tags[]=t').join('&'),
  ]);
}

// ── the targets: every entity path, RBAC's routes, every plugin config ──────────────────────────────────────

interface Target {
  method: 'POST' | 'PUT' | 'PATCH';
  path: string;
  fields: readonly string[];
  /** fields sent as they must be, so the hostile ones are what is judged (a plugin's name) */
  fixed?: Record<string, string>;
}

function shapeKeys(schema: { shape?: Record<string, unknown> } | undefined): string[] {
  return schema?.shape ? Object.keys(schema.shape) : [];
}

async function buildTargets(app: AdminApp, http: Http): Promise<Target[]> {
  const admin = app.locals.admin;
  const ok = async (method: string, path: string, body: unknown) => {
    const res = await http(method, path, { type: 'application/json', body: Buffer.from(JSON.stringify(body)) });
    if (res.status >= 300) throw new Error(`fixture ${method} ${path} → ${res.status} ${res.text}`);
    return JSON.parse(res.text) as { id: string };
  };
  await ok('POST', '/services', { name: 'fz-svc', url: 'http://fz.test' });
  await ok('POST', '/services/fz-svc/routes', { name: 'fz-route', paths: ['/fz'] });
  await ok('POST', '/consumers', { username: 'fz-consumer' });
  await ok('POST', '/key-sets', { name: 'fz-ks' });
  await ok('POST', '/apis', { name: 'fz-api', uris: ['/fz-api'], upstream_url: 'http://fz.test' });
  const plugin = await ok('POST', '/plugins', { name: 'request-termination', config: { status_code: 418 } });
  await ok('POST', '/rbac/users', { name: 'fz-user', user_token: 'fz-user-token-0123456789' });
  await ok('POST', '/rbac/roles', { name: 'fz-role' });

  const targets: Target[] = [];
  const writes = (path: string, fields: readonly string[], methods: Target['method'][], fixed?: Record<string, string>) => {
    for (const method of methods) targets.push({ method, path, fields, fixed });
  };
  const existing: Record<string, string> = {
    services: 'fz-svc',
    routes: 'fz-route',
    consumers: 'fz-consumer',
    key_sets: 'fz-ks',
    plugins: plugin.id,
  };
  for (const kind of admin.entities.allKinds()) {
    const fields = shapeKeys(kind.def.schema);
    writes(`/${kind.def.adminPath}`, fields, ['POST']);
    writes(`/${kind.def.adminPath}/${existing[kind.def.name] ?? 'fz-missing'}`, fields, ['PUT', 'PATCH']);
    for (const fk of kind.def.foreignKeys) {
      const parent = admin.entities.kind(fk.entity);
      const parentRef = existing[parent.def.name];
      if (!parentRef) continue;
      writes(`/${parent.def.adminPath}/${parentRef}/${kind.nestedPaths?.[fk.entity] ?? kind.def.adminPath}`, fields, ['POST']);
    }
  }
  // every plugin's config, on the global collection and scoped
  for (const p of admin.plugins) {
    const configFields = shapeKeys(p.configSchema).map((f) => `config.${f}`);
    const pluginFields = ['config', 'protocols', 'enabled', 'route', 'service', 'consumer', 'tags', 'instance_name', ...configFields];
    writes('/plugins', pluginFields, ['POST'], { name: JSON.stringify(p.name) });
    writes('/services/fz-svc/plugins', pluginFields, ['POST'], { name: JSON.stringify(p.name) });
    writes(`/plugins/${plugin.id}`, pluginFields, ['PATCH'], { name: JSON.stringify(p.name) });
  }
  // the legacy interface and RBAC's own routes
  const apiFields = ['name', 'uris', 'hosts', 'methods', 'upstream_url', 'strip_uri', 'preserve_host', 'retries', 'https_only'];
  writes('/apis', apiFields, ['POST', 'PUT']);
  writes('/apis/fz-api', apiFields, ['PATCH', 'PUT']);
  const userFields = ['name', 'user_token', 'comment', 'enabled', 'id'];
  const roleFields = ['name', 'comment', 'is_default', 'id'];
  writes('/rbac/users', userFields, ['POST']);
  writes('/rbac/users/fz-user', userFields, ['PATCH', 'PUT']);
  writes('/rbac/roles', roleFields, ['POST', 'PUT']);
  writes('/rbac/roles/fz-role', roleFields, ['PATCH', 'PUT']);
  writes('/rbac/roles/fz-role/endpoints', ['workspace', 'endpoint', 'actions', 'negative', 'comment'], ['POST']);
  writes('/rbac/roles/fz-role/entities', ['entity_id', 'entity_type', 'actions', 'negative', 'comment'], ['POST']);
  writes('/rbac/users/fz-user/roles', ['roles'], ['POST']);
  writes('/workspaces', ['name', 'comment', 'config', 'meta'], ['POST']);
  writes('/admins', ['username', 'custom_id', 'email', 'rbac_token_enabled'], ['POST']);
  return targets;
}

// ── the admin API over a real listener, and the state a refused write must leave alone ───────────────────────

interface Answer {
  status: number;
  text: string;
}
type Http = (method: string, path: string, opts: { type?: string; body: Buffer }) => Promise<Answer>;

function httpClient(port: number): { http: Http; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const http: Http = (method, path, { type, body }) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { 'content-length': body.length };
      if (type !== undefined) headers['content-type'] = type;
      const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  return { http, close: () => agent.destroy() };
}

const RBAC_TABLES = ['workspaces', 'workspace_entities', 'rbac_users', 'rbac_roles', 'rbac_user_roles', 'rbac_role_endpoints', 'rbac_role_entities', 'admins'];

/** every table's row count and the config version, in one query */
function stateReader(database: Database, tables: string[]): () => Promise<string> {
  return async () => {
    const row = await database.db
      .selectFrom('config_state')
      .where('id', '=', 1)
      .select((eb) => [
        'version',
        ...tables.map((table) =>
          eb
            .selectFrom(table)
            .select((inner) => inner.fn.countAll().as('n'))
            .as(table),
        ),
      ])
      .executeTakeFirstOrThrow();
    return JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  };
}

// ── one request, generated ───────────────────────────────────────────────────────────────────────────────

interface Generated {
  method: string;
  path: string;
  type?: string;
  body: Buffer;
  label: string;
  /** carries a defect every endpoint must refuse */
  certain: boolean;
}

const WRONG_TYPES = ['text/plain', 'application/xml', 'image/png', 'application/octet-stream'];
/** parsed as JSON or as a form all the same: what they carry decides */
const ODD_CHARSETS = ['application/json; charset=utf-16', 'application/merge-patch+json', 'application/x-www-form-urlencoded; charset=latin1'];

function generate(rng: Rng, targets: Target[]): Generated {
  const target = rng.pick(targets);
  const { method, path, fields, fixed = {} } = target;
  const fixedText = Object.fromEntries(Object.entries(fixed).map(([k, v]) => [k, JSON.parse(v) as string]));
  const certain = rng.chance(0.9);
  const roll = rng.next();
  if (roll < 0.5) {
    const defect = certain ? jsonDefect(rng) : {};
    let text = jsonBody(rng, fields, fixed);
    if (defect.entry) text = `${text.slice(0, -1)},${defect.entry}}`;
    const body = defect.invalidUtf8 ? withInvalidUtf8(rng, text) : Buffer.from(text);
    const type = certain ? 'application/json' : rng.pick(['application/json', ODD_CHARSETS[0]!, ODD_CHARSETS[1]!]);
    return { method, path, type, body, certain, label: `json ${text.slice(0, 160)}` };
  }
  if (roll < 0.75) {
    let text = formBody(rng, fields, fixedText);
    // first: when two keys disagree on a field's shape the first one is kept, so the defect cannot be dropped
    if (certain) text = `${formDefect(rng)}&${text}`;
    const type = certain ? 'application/x-www-form-urlencoded' : rng.pick(['application/x-www-form-urlencoded', ODD_CHARSETS[2]!]);
    return { method, path, type, body: Buffer.from(text), certain, label: `form ${text.slice(0, 160)}` };
  }
  if (roll < 0.92) {
    const { type, body, broken } = multipartBody(rng, fields, fixedText, certain);
    return { method, path, type, body, certain: broken, label: `multipart ${type} ${body.toString('latin1').slice(0, 160)}` };
  }
  if (certain) {
    const body = rng.chance(0.5) ? Buffer.from(jsonBody(rng, fields, fixed)) : Buffer.from('<xml>nope</xml>');
    const type = rng.chance(0.8) ? rng.pick(WRONG_TYPES) : undefined;
    return { method, path, type, body, certain, label: `content-type ${String(type)}` };
  }
  // no body at all: the route judges an empty input
  return { method, path, type: rng.pick(['application/json', 'application/x-www-form-urlencoded', undefined]), body: Buffer.alloc(0), certain: false, label: 'empty body' };
}

// ── the runs ─────────────────────────────────────────────────────────────────────────────────────────────────

interface Harness {
  app: AdminApp;
  database: Database;
  server: Server;
  /** what the admin API logged as faults (every 500 is logged) */
  logged: string[];
  close(): Promise<void>;
}

async function startHarness(backend: 'postgres' | 'pglite'): Promise<Harness> {
  let database: Database;
  let dispose: () => Promise<void>;
  const migrations = { ...keyMigrations(), ...rbacMigrations() };
  if (backend === 'postgres') {
    const testDb: TestDatabase = await createTestDatabase('gh_fuzz');
    database = await openDatabase({ url: testDb.url, poolSize: 4, migrations }).catch(async (err) => {
      await testDb.drop();
      throw err;
    });
    dispose = () => testDb.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-fuzz-'));
    database = await openDatabase({ dataDir: dir, migrations });
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  }
  const rbac = createRbac({ db: database.db, mode: 'off', log: () => {} });
  const logged: string[] = [];
  const app = createAdminApp({
    database,
    middleware: rbac.middleware,
    extensions: [rbac.extension, keysExtension(keyringFromSecret('fuzz-keyring-secret-0123456789abcdef'))],
    log: (message, err) => void logged.push(`${message} ${err instanceof Error ? err.stack : String(err)}`),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    app,
    database,
    server,
    logged,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close();
      await dispose();
    },
  };
}

describe.each(['postgres', 'pglite'] as const)('admin API fuzz on %s', (backend) => {
  let h: Harness;
  let client: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    h = await startHarness(backend);
    client = httpClient((h.server.address() as AddressInfo).port);
  });
  afterAll(async () => {
    client?.close();
    await h?.close();
  });

  it(`${REQUESTS} hostile requests: no 5xx, and no refused write leaves anything behind (seed ${SEED})`, async () => {
    const targets = await buildTargets(h.app, client.http);
    const tables = [...h.app.locals.admin.store.entityNames(), ...RBAC_TABLES];
    const readState = stateReader(h.database, tables);
    const rng = new Rng(SEED ^ (backend === 'postgres' ? 0 : 0x5bd1e995));
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let baseline = await readState();

    let window: number[] = [];
    const checkWindow = async () => {
      const now = await readState();
      if (now !== baseline) failures.push(`seed ${SEED} (${backend}): the database changed during requests #${window.join(', #')}, all refused: ${baseline} → ${now}`);
      baseline = now;
      window = [];
    };
    for (let i = 0; i < REQUESTS && failures.length < 10; i++) {
      const g = generate(rng, targets);
      if (!g.certain && window.length) await checkWindow();
      const res = await client.http(g.method, g.path, { type: g.type, body: g.body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `seed ${SEED} (${backend}) request #${i}: ${g.method} ${g.path} ${g.label.slice(0, 200)}`;
      if (res.status >= 500) failures.push(`${where} → ${res.status} ${res.text.slice(0, 300)}`);
      if (g.certain) {
        if (res.status < 400 || res.status >= 500) failures.push(`${where} → ${res.status}, a 4xx expected ${res.text.slice(0, 300)}`);
        window.push(i);
        if (window.length >= WINDOW) await checkWindow();
      } else {
        const after = await readState();
        if (res.status >= 400 && after !== baseline) failures.push(`${where} → ${res.status} but the database changed: ${baseline} → ${after}`);
        baseline = after;
      }
    }
    if (window.length) await checkWindow();
    if (failures.length) process.stderr.write(`admin fuzz failed; replay with GATEHOUSE_FUZZ_SEED=${SEED}\n`);
    expect(failures).toEqual([]);
    expect(h.logged.slice(0, 3)).toEqual([]);
    // the run was hostile: nearly everything refused, with a client error
    const refused = [...statuses].filter(([status]) => status >= 400 && status < 500).reduce((n, [, c]) => n + c, 0);
    expect(refused).toBeGreaterThan(REQUESTS * 0.9);
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
  });
});
