/**
 * The admin API under generated hostile input (issue 9, decision 16; issue 23, decisions 26 and 30), on both
 * databases: every entity path, every plugin config, RBAC's routes and `POST /config` receive wrong types, huge
 * strings and arrays, NUL bytes and invalid UTF-8, deep nesting, prototype-pollution keys and JavaScript built-in names
 * (`toString`, `valueOf`, `hasOwnProperty`, …), broken multipart and wrong content types, as JSON, form, multipart and
 * (for declarative documents) YAML bodies, with query-string flags read one way.
 * Rules: no answer is a 5xx, and a refused write leaves nothing behind (every table's row count and the config
 * version are what they were before it).
 *
 * Most requests carry at least one defect that must be refused whatever the endpoint (a NUL byte, a
 * prototype-pollution key, nesting past 64 levels, an array past 1,000 elements, a string past 64 KiB, bytes that
 * are not UTF-8, a nameless or truncated multipart part, an array index out of range, an unsupported content type, a
 * flag that is not a boolean, a declarative document that cannot load):
 * those must all answer a 4xx, and the database state (every table's row count and the config version, read in one
 * query) is compared every 50 of them. The other requests (wrong types, odd charsets, nothing certainly wrong) may be
 * accepted; the state is read right before and right after each of them, so a refused one is checked on its own.
 * Declarative documents that may load are sent with `dry_run`, so the fixtures the other requests aim at stay.
 *
 * Seeded: GATEHOUSE_FUZZ_SEED (default fixed) and GATEHOUSE_FUZZ_REQUESTS per database (default 10,000, so 20,000
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
  tlsExtension,
  tlsMigrations,
  type AdminApp,
  type Database,
} from '@gatehouse/control-plane';
import { createTestDatabase, seededRandom, type TestDatabase } from '@gatehouse/testkit';

// generous for a loaded machine; on a quiet one each database's run takes well under half a minute
jest.setTimeout(300_000);

const SEED = Number(process.env.GATEHOUSE_FUZZ_SEED ?? 0x9a7e5eed) >>> 0;
const REQUESTS = Number(process.env.GATEHOUSE_FUZZ_REQUESTS ?? 10_000);
/** certainly-refused requests between two reads of the database state */
const WINDOW = 50;

// ── the testkit's seeded sequence, with the picks the generators need ─────────────────────────────────────

class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = seededRandom(seed);
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
/** names of Object.prototype's members and other built-ins: ordinary field names (decision 26) */
const BUILT_IN_NAMES = ['toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupGetter__', 'then', 'length', 'toJSON'];
const SHORT_STRINGS = ['', 'x', 'fz', '/x', '~/(a+)+$', 'http://fz.test', '0', 'true', 'null', '*', '../..', '%00', 'ümlaut', '🦀'];

/** nesting past 64 levels (`certain`), or within it */
function deepJson(rng: Rng, certain = true): string {
  const depth = certain ? rng.pick([65, 100, 1000, 5000]) : rng.pick([33, 60]);
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
      return deepJson(rng, rng.chance(0.5));
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
  if (roll < 0.7) return rng.pick(FORBIDDEN_KEYS);
  if (roll < 0.78) return rng.pick(BUILT_IN_NAMES);
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
    rng.pick(['', '', '[]', '[1]', '[-1]', '[0]', '[1001]', '[99999999999999999999]', '[x]', '.a', '.__proto__', '.toString', '[valueOf]', '[1][2]', '[', '..', '.', `${'[1]'.repeat(40)}`, `${'.a'.repeat(50)}`])
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
  const randomParts = () => {
    for (let i = rng.int(1, 3); i > 0; i--) part(`Content-Disposition: form-data; name="${formKey(rng, fieldNames)}"`, formValue(rng));
  };
  // a defective part goes before the random ones: when two parts disagree on a field's shape the first is kept, so
  // a random part must not be able to make the defect dropped
  if (!certain) randomParts();
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
    randomParts();
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
    `a${'[b]'.repeat(70)}=1`,
    `config${'.c'.repeat(64)}=1`,
    `tags${'%5Bx%5D'.repeat(100)}=1`,
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

/** an entity family of a declarative document (`services`, `keyauth_credentials`, …) and its fields */
interface DocFamily {
  name: string;
  fields: readonly string[];
}

interface Targets {
  writes: Target[];
  families: DocFamily[];
}

function shapeKeys(schema: { shape?: Record<string, unknown> } | undefined): string[] {
  return schema?.shape ? Object.keys(schema.shape) : [];
}

async function buildTargets(app: AdminApp, http: Http): Promise<Targets> {
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
  await ok('POST', '/upstreams', { name: 'fz-up' });
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
    upstreams: 'fz-up',
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
  const families = admin.entities.allKinds().map((kind) => ({ name: kind.def.name, fields: shapeKeys(kind.def.schema) }));
  return { writes: targets, families };
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

const TRUE_WORDS = ['true', '1', 'yes', 'on', 'TRUE', 'Yes', 'ON'];
const BAD_FLAGS = ['maybe', '2', 'y', 'nope', 'truthy', '1&dry_run=0'];

/** a hostile entity of one family, as JSON text (its own fields, hostile values, now and then a nested family) */
function docEntity(rng: Rng, family: DocFamily, families: DocFamily[], depth = 0): string {
  const entries: string[] = [];
  for (let i = rng.int(1, 4); i > 0; i--) entries.push(`${JSON.stringify(hostileKey(rng, family.fields))}:${hostileJson(rng, family.fields, 1)}`);
  if (depth < 2 && rng.chance(0.3)) {
    const child = rng.pick(families);
    entries.push(`${JSON.stringify(child.name)}:[${docEntity(rng, child, families, depth + 1)}]`);
  }
  return `{${entries.join(',')}}`;
}

function docJson(rng: Rng, families: DocFamily[]): string {
  const entries = [`"_format_version":${JSON.stringify(rng.chance(0.9) ? '3.0' : rng.pick(['1.1', '2.1', 3, null]))}`];
  for (let i = rng.int(1, 3); i > 0; i--) {
    const family = rng.pick(families);
    const count = rng.chance(0.02) ? rng.int(1001, 1200) : rng.int(1, 4);
    const items = Array.from({ length: count }, () => (count > 10 ? `{"name":"n${rng.int(0, 1e9)}"}` : docEntity(rng, family, families)));
    entries.push(`${JSON.stringify(rng.chance(0.1) ? rng.pick(BUILT_IN_NAMES) : family.name)}:[${items.join(',')}]`);
  }
  return `{${entries.join(',')}}`;
}

/** YAML-only shapes: block style, anchors, aliases and merge keys, built-in names as keys */
function docYaml(rng: Rng, families: DocFamily[]): string {
  const family = rng.pick(families);
  const key = hostileKey(rng, family.fields).split('\u0000').join('');
  const value = rng.pick(['x', '1', 'true', '~', '[]', '{}', '"q"', `${'['.repeat(30)}1${']'.repeat(30)}`, '*base']);
  const lines = ['_format_version: "3.0"', 'base: &base {name: anchored}'];
  lines.push(`${family.name}:`, `- <<: *base`, `  ${JSON.stringify(key)}: ${value}`);
  if (rng.chance(0.5)) lines.push(`- name: ${rng.pick(BUILT_IN_NAMES)}`, `  tags: [*base, *base]`);
  return lines.join('\n') + '\n';
}

/** a document no control plane may load, and the defect that says so */
function certainDocument(rng: Rng, families: DocFamily[]): { query: string; type: string; body: string } {
  const doc = docJson(rng, families);
  switch (rng.int(0, 9)) {
    case 0:
      return { query: '', type: 'application/json', body: `{"_format_version":"3.0","services":[${deepJson(rng)}]}` };
    case 1: {
      let block = '_format_version: "3.0"\nservices:\n';
      for (let i = 1; i <= rng.pick([65, 80, 300]); i++) block += `${' '.repeat(i)}k${i}:\n`;
      return { query: '', type: rng.pick(['application/yaml', 'text/yaml', 'text/plain']), body: block };
    }
    case 2:
      return { query: '', type: 'application/yaml', body: `_format_version: "3.0"\nservices: ${'['.repeat(rng.pick([65, 1000, 100_000]))}\n` };
    case 3:
      return { query: '', type: 'application/json', body: doc.replace('"_format_version":', '"_format_versionz":') };
    case 4:
      // (top-level keys starting with `_` are the document's own metadata, so not those)
      return { query: '', type: 'application/json', body: `{"_format_version":"3.0",${JSON.stringify(rng.pick(BUILT_IN_NAMES.filter((n) => !n.startsWith('_'))))}:[]}` };
    case 5:
      return { query: '', type: 'application/json', body: `{"_format_version":"3.0","services":[{"name":"s","url":"http://s.test",${JSON.stringify(rng.pick(BUILT_IN_NAMES))}:1}]}` };
    case 6:
      return { query: `?${rng.pick(['dry_run', 'check_hash', 'flatten_errors'])}=${rng.pick(BAD_FLAGS)}`, type: 'application/json', body: doc };
    case 7:
      return { query: '', type: 'application/x-www-form-urlencoded', body: `config=${encodeURIComponent(`{"_format_version":"3.0","consumers":[${deepJson(rng)}]}`)}` };
    case 8: {
      // an alias bomb: each level doubles what the one below holds
      const lines = ['_format_version: "3.0"', 'a0: &a0 [x, x]'];
      for (let i = 1; i < 20; i++) lines.push(`a${i}: &a${i} [*a${i - 1}, *a${i - 1}]`);
      return { query: '', type: 'application/yaml', body: lines.join('\n') };
    }
    default:
      return { query: '', type: rng.pick(['application/xml', 'image/png']), body: doc };
  }
}

function declarative(rng: Rng, families: DocFamily[]): Generated {
  const certain = rng.chance(0.7);
  if (certain) {
    const { query, type, body } = certainDocument(rng, families);
    return { method: 'POST', path: `/config${query}`, type, body: Buffer.from(body), certain, label: `config ${type} ${body.slice(0, 160)}` };
  }
  // may load: asked as a dry run (with check_hash now and then), so the fixtures stay
  const flags = `?dry_run=${rng.pick(TRUE_WORDS)}${rng.chance(0.3) ? `&check_hash=${rng.pick(TRUE_WORDS)}` : ''}${rng.chance(0.3) ? '&flatten_errors=1' : ''}`;
  const roll = rng.next();
  const json = docJson(rng, families);
  if (roll < 0.5) return { method: 'POST', path: `/config${flags}`, type: 'application/json', body: Buffer.from(json), certain, label: `config json ${json.slice(0, 160)}` };
  if (roll < 0.8) {
    const yaml = docYaml(rng, families);
    return { method: 'POST', path: `/config${flags}`, type: 'application/yaml', body: Buffer.from(yaml), certain, label: `config yaml ${yaml.slice(0, 160)}` };
  }
  return { method: 'POST', path: `/config${flags}`, type: 'application/x-www-form-urlencoded', body: Buffer.from(`config=${encodeURIComponent(json)}`), certain, label: `config form ${json.slice(0, 160)}` };
}

function generate(rng: Rng, { writes, families }: Targets): Generated {
  if (rng.chance(0.12)) return declarative(rng, families);
  const target = rng.pick(writes);
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
  const migrations = { ...keyMigrations(), ...rbacMigrations(), ...tlsMigrations() };
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
  const keyring = keyringFromSecret('fuzz-keyring-secret-0123456789abcdef');
  const logged: string[] = [];
  const app = createAdminApp({
    database,
    middleware: rbac.middleware,
    extensions: [rbac.extension, keysExtension(keyring), tlsExtension(keyring)],
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
