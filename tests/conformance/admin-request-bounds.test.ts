/**
 * Decision 26 (admin request bounds, every endpoint) and decision 30 (one reading of query-string flags), against the
 * admin API over Postgres: nesting past 64 levels (JSON, YAML, form keys) is a 400 before any parser recurses, bodies
 * are limited before they are buffered (4 MiB; `POST /config` its own limit), JavaScript built-in names are ordinary
 * field names, and `dry_run`, `check_hash`, `flatten_errors` and `balancer_health` read their values one way.
 */
import type { AddressInfo } from 'node:net';
import { request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

const CONFIG_LIMIT = 1024 * 1024;
const TOO_DEEP = { message: 'request body nests too deeply (limit 64)' };
const TOO_LARGE = { message: 'Request size limit exceeded' };

let admin: AdminHarness;
let server: Server;
let base: string;

beforeAll(async () => {
  admin = await startAdmin('postgres', { configBodyLimit: CONFIG_LIMIT, log: () => {} });
  server = admin.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await admin?.close();
});

async function send(method: string, path: string, type: string | null, body?: string | Buffer): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method, headers: type ? { 'content-type': type } : {}, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
}

const nested = (levels: number, leaf = '1') => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;
const serviceCount = async () => ((await admin.http().get('/services')).body as { data: unknown[] }).data.length;

describe('decision 26: nesting is bounded at 64 levels before any parser recurses', () => {
  it('a 1,000-level document on POST /config is a 400, twice, and the control plane keeps answering', async () => {
    const doc = `{"_format_version":"3.0","services":[${nested(1000)}]}`;
    expect(await send('POST', '/config', 'application/json', doc)).toEqual({ status: 400, body: TOO_DEEP });
    expect(await send('POST', '/config', 'application/json', doc)).toEqual({ status: 400, body: TOO_DEEP });
    expect((await send('GET', '/status', null)).status).toBe(200);
  });

  it('YAML documents: block indentation, flow brackets and `- ` indicators all count', async () => {
    let block = '_format_version: "3.0"\nservices:\n';
    for (let i = 1; i <= 70; i++) block += `${' '.repeat(i * 2)}k${i}:\n`;
    block += `${' '.repeat(142)}v\n`;
    const flow = `_format_version: "3.0"\nservices: ${'['.repeat(2000)}${']'.repeat(2000)}\n`;
    const dashes = `_format_version: "3.0"\nservices:\n${'- '.repeat(100)}x\n`;
    for (const doc of [block, flow, dashes]) expect(await send('POST', '/config', 'application/yaml', doc)).toEqual({ status: 400, body: TOO_DEEP });
    // aliases that make the value deeper than its text are held to the same bound
    const anchors = ['_format_version: "3.0"', `a0: &a0 ${'['.repeat(40)}1${']'.repeat(40)}`, `a1: &a1 ${'['.repeat(40)}*a0${']'.repeat(40)}`];
    expect(await send('POST', '/config', 'application/yaml', anchors.join('\n'))).toEqual({ status: 400, body: TOO_DEEP });
  });

  it('a document in the form field `config`, or in a JSON body\'s `config` string, is held to it too', async () => {
    const inner = `{"_format_version":"3.0","services":[${nested(500)}]}`;
    expect(await send('POST', '/config', 'application/x-www-form-urlencoded', `config=${encodeURIComponent(inner)}`)).toEqual({ status: 400, body: TOO_DEEP });
    expect(await send('POST', '/config', 'application/json', JSON.stringify({ config: inner }))).toEqual({ status: 400, body: TOO_DEEP });
  });

  it('entity bodies: JSON past 64 levels and form keys past 64 segments are a 400; 64 levels pass the bound', async () => {
    expect(await send('POST', '/services', 'application/json', `{"name":"deep","tags":${nested(64)}}`)).toEqual({ status: 400, body: TOO_DEEP });
    expect(await send('POST', '/rbac/roles', 'application/json', nested(5000))).toEqual({ status: 400, body: TOO_DEEP });
    expect(await send('POST', '/consumers', 'application/x-www-form-urlencoded', `username=x&tags${'[a]'.repeat(64)}=1`)).toEqual({ status: 400, body: TOO_DEEP });
    expect(await send('POST', '/consumers', 'application/x-www-form-urlencoded', `username=x&tags${'%5Ba%5D'.repeat(64)}=1`)).toEqual({ status: 400, body: TOO_DEEP });
    // 64 levels in all: the schema judges it
    const atLimit = await send('POST', '/consumers', 'application/json', `{"username":"deep","tags":${nested(63)}}`);
    expect(atLimit).toEqual({ status: 400, body: expect.objectContaining({ name: 'schema violation', fields: { tags: 'expected an array' } }) });
  });
});

describe('decision 26: bodies are limited before they are buffered', () => {
  it('an entity body past 4 MiB is a 413; one within it is judged by the schema', async () => {
    expect(await send('POST', '/services', 'application/json', `{"name":"${'x'.repeat(4 * 1024 * 1024)}"}`)).toEqual({ status: 413, body: TOO_LARGE });
    expect((await send('POST', '/services', 'application/json', `{"name":"${'x'.repeat(1025)}"}`)).status).toBe(400);
  });

  it('POST /config takes up to its own limit, larger than 4 MiB by default; past it a 413', async () => {
    const doc = (filler: number) => `{"_format_version":"3.0","_comment":"${'c'.repeat(filler)}","services":[{"name":"sized","url":"http://sized.test"}]}`;
    expect(await send('POST', '/config', 'application/json', doc(CONFIG_LIMIT + 1))).toEqual({ status: 413, body: TOO_LARGE });
    expect(await serviceCount()).toBe(0);
    expect((await send('POST', '/config', 'application/json', doc(CONFIG_LIMIT - 200))).status).toBe(201);
    expect(await serviceCount()).toBe(1);
  });

  it('a declared Content-Length past the limit is refused before the body is sent, and the connection closes', async () => {
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/config', headers: { 'content-type': 'application/json', 'content-length': String(512 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      });
      req.on('error', reject);
      req.write('{"_format_version":"3.0"');
      // the rest is never sent: the answer must come anyway
    });
    expect([answer.status, answer.connection, JSON.parse(answer.body)]).toEqual([413, 'close', TOO_LARGE]);
  });
});

describe('decision 26: JavaScript built-in names are ordinary field names', () => {
  const BUILT_INS = ['toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__'];

  it('unknown ones are a schema violation naming the field, in JSON and form bodies, at the top and inside config', async () => {
    for (const name of BUILT_INS) {
      const json = await send('POST', '/services', 'application/json', JSON.stringify({ name: 'b', url: 'http://b.test', [name]: 1 }));
      expect([name, json.status, (json.body as { fields: unknown }).fields]).toEqual([name, 400, { [name]: 'unknown field' }]);
      const form = await send('POST', '/services', 'application/x-www-form-urlencoded', `name=b&url=http://b.test&${name}=1`);
      expect([name, form.status, (form.body as { fields: unknown }).fields]).toEqual([name, 400, { [name]: 'unknown field' }]);
      const config = await send('POST', '/plugins', 'application/x-www-form-urlencoded', `name=key-auth&config.${name}=1`);
      expect([name, config.status, (config.body as { fields: unknown }).fields]).toEqual([name, 400, { config: { [name]: 'unknown field' } }]);
      const patch = await send('PATCH', '/consumers/nobody', 'application/x-www-form-urlencoded', `${name}.x=1`);
      expect([name, patch.status]).toEqual([name, 404]);
    }
    expect(await serviceCount()).toBe(1);
  });

  it('in a declarative document, an unknown one is named like any other field', async () => {
    const res = await send('POST', '/config', 'application/json', JSON.stringify({ _format_version: '3.0', services: [{ name: 'b', url: 'http://b.test', valueOf: 1 }] }));
    expect(res.status).toBe(400);
    expect((res.body as { fields: unknown }).fields).toEqual({ service: { b: { valueOf: 'unknown field' } } });
  });
});

describe('decision 30: one reading of query-string flags', () => {
  const doc = (name: string) => JSON.stringify({ _format_version: '3.0', services: [{ name, url: 'http://flags.test' }] });
  const names = async () => ((await admin.http().get('/services')).body as { data: Array<{ name: string }> }).data.map((s) => s.name).sort();

  it('dry_run: true, 1, yes, on in any case write nothing; false, 0, no, off write', async () => {
    const before = await names();
    for (const value of ['true', '1', 'yes', 'on', 'YES', 'On', 'TRUE']) {
      const res = await send('POST', `/config?dry_run=${value}`, 'application/json', doc(`dry-${value}`));
      expect([value, res.status]).toEqual([value, 200]);
      expect(await names()).toEqual(before);
    }
    for (const value of ['false', '0', 'no', 'off', 'No']) {
      const res = await send('POST', `/config?dry_run=${value}`, 'application/json', doc(`real-${value}`));
      expect([value, res.status, await names()]).toEqual([value, 201, [`real-${value}`]]);
    }
  });

  it('any other value, or the flag given twice, is a 400 naming the parameter, and nothing is written', async () => {
    const before = await names();
    for (const [name, query] of [
      ['dry_run', 'dry_run=maybe'],
      ['dry_run', 'dry_run=1&dry_run=0'],
      ['check_hash', 'check_hash=2'],
      ['flatten_errors', 'flatten_errors=y'],
    ]) {
      const res = await send('POST', `/config?${query}`, 'application/json', doc('never'));
      expect([query, res.status, (res.body as { name: string; fields: unknown }).name, (res.body as { fields: unknown }).fields]).toEqual([
        query,
        400,
        'invalid options',
        { [name]: 'expected a boolean: true, false, 1, 0, yes, no, on or off' },
      ]);
    }
    expect(await names()).toEqual(before);
  });

  it('check_hash and flatten_errors read the same words', async () => {
    const current = await names();
    const same = await send('POST', '/config?check_hash=Yes', 'application/json', doc(current[0]!));
    expect(same.status).toBe(304);
    const flattened = await send('POST', '/config?flatten_errors=on', 'application/json', JSON.stringify({ _format_version: '3.0', services: [{ name: 'x', port: 'nope' }] }));
    expect([flattened.status, Array.isArray((flattened.body as { flattened_errors?: unknown }).flattened_errors)]).toEqual([400, true]);
    const plain = await send('POST', '/config?flatten_errors=off', 'application/json', JSON.stringify({ _format_version: '3.0', services: [{ name: 'x', port: 'nope' }] }));
    expect([plain.status, (plain.body as { flattened_errors?: unknown }).flattened_errors]).toEqual([400, undefined]);
  });

  it('balancer_health on /upstreams/{u}/health', async () => {
    expect((await admin.http().post('/upstreams').send({ name: 'flags-up' })).status).toBe(201);
    const on = await send('GET', '/upstreams/flags-up/health?balancer_health=ON', null);
    expect([on.status, (on.body as { data: { health: string } }).data.health]).toEqual([200, 'HEALTHCHECKS_OFF']);
    const off = await send('GET', '/upstreams/flags-up/health?balancer_health=no', null);
    expect([off.status, (off.body as { data: unknown[] }).data]).toEqual([200, []]);
    const bad = await send('GET', '/upstreams/flags-up/health?balancer_health=2', null);
    expect([bad.status, (bad.body as { fields: unknown }).fields]).toEqual([400, { balancer_health: 'expected a boolean: true, false, 1, 0, yes, no, on or off' }]);
  });
});
