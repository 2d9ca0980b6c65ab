import { describe, expect, it } from '@jest/globals';
import { fakeContext, type FakeRequest } from '../../test/support/fake-context';
import { requestTransformerAccess } from './handler';
import { requestTransformer } from './index';
import { requestTransformerConfigSchema } from './schema';

async function run(config: Record<string, unknown>, request: FakeRequest) {
  const { ctx, recorded } = fakeContext(request);
  await requestTransformerAccess(ctx, requestTransformerConfigSchema.parse(config));
  return recorded;
}

const BOUNDARY = 'xYzZY';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

/** a multipart body of plain fields, as a client writes it */
function multipart(fields: Array<[string, string]>): string {
  return fields.map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') + `--${BOUNDARY}--\r\n`;
}

/** the fields of a multipart body, in order */
function fieldsOf(body: Buffer | null): Array<[string, string]> {
  if (body === null) return [];
  return [...body.toString().matchAll(/name="([^"]*)"\r\n\r\n([^\r]*)\r\n/g)].map((m) => [m[1]!, m[2]!]);
}

describe('request-transformer on multipart/form-data bodies', () => {
  const post = (fields: Array<[string, string]>) => ({ method: 'POST', headers: MULTIPART, body: multipart(fields) });

  it('remove: parameters on multipart POST', async () => {
    const recorded = await run({ remove: { body: ['toremoveform'] } }, post([['toremoveform', 'yes'], ['nottoremove', 'yes']]));
    expect(fieldsOf(recorded.body)).toEqual([['nottoremove', 'yes']]);
  });

  it('rename: parameters on multipart POST', async () => {
    const recorded = await run({ rename: { body: ['originalparam:renamedparam'] } }, post([['originalparam', 'yes'], ['nottorename', 'yes']]));
    expect(fieldsOf(recorded.body)).toEqual([['nottorename', 'yes'], ['renamedparam', 'yes']]);
  });

  it('replace: specified parameters on multipart POST; does not add as new parameter if parameter does not exist', async () => {
    const config = { replace: { body: ['p1:v1'] } };
    expect(fieldsOf((await run(config, post([['p1', 'v'], ['p2', 'v1']]))).body)).toEqual([['p2', 'v1'], ['p1', 'v1']]);
    expect((await run(config, post([['p2', 'v1']]))).body).toBeNull();
  });

  it('add: new parameter on multipart POST (an empty body too); does not change or append value to parameter when parameter exists', async () => {
    const config = { add: { body: ['p1:v1'] } };
    expect(fieldsOf((await run(config, { method: 'POST', headers: MULTIPART, body: '' })).body)).toEqual([['p1', 'v1']]);
    expect((await run(config, post([['p1', 'this should not change'], ['hello', 'world']]))).body).toBeNull();
  });

  it('append: does not change or append value to parameter on multipart POST', async () => {
    expect((await run({ append: { body: ['p1:v1'] } }, post([['p1', 'This should not change']]))).body).toBeNull();
  });

  it('keeps the other parts byte for byte (a file part with its own headers), and leaves a body without boundary alone', async () => {
    const file = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nline\r\n`;
    const recorded = await run({ remove: { body: ['gone'] } }, { method: 'POST', headers: MULTIPART, body: `${file}${multipart([['gone', 'x']])}` });
    expect(recorded.body!.toString()).toBe(`${file}--${BOUNDARY}--\r\n`);
    expect((await run({ remove: { body: ['gone'] } }, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: multipart([['gone', 'x']]) })).body).toBeNull();
  });
});

describe('request-transformer', () => {
  it("Kong's name, priority and defaults", () => {
    expect([requestTransformer.name, requestTransformer.priority]).toEqual(['request-transformer', 801]);
    const empty = { body: [], headers: [], querystring: [] };
    expect(requestTransformerConfigSchema.parse({})).toEqual({ http_method: null, remove: empty, rename: empty, replace: { ...empty, uri: null }, add: empty, append: empty });
    expect(requestTransformerConfigSchema.safeParse({ add: { headers: ['no-colon'] } }).success).toBe(false);
    expect(requestTransformerConfigSchema.safeParse({ http_method: 'get' }).success).toBe(false);
  });

  it('headers: remove, rename, replace, add, append, in that order; names case-insensitive', async () => {
    const recorded = await run(
      {
        remove: { headers: ['X-Gone'] },
        rename: { headers: ['X-Old:X-New', 'x-missing:x-never'] },
        replace: { headers: ['x-new:replaced', 'x-absent:no'] },
        add: { headers: ['x-new:not-added', 'x-added:a:b'] },
        append: { headers: ['x-added:c', 'x-list:1'] },
      },
      { headers: { 'x-gone': '1', 'x-old': 'o' } },
    );
    expect(Object.fromEntries(recorded.headers)).toEqual({ 'x-gone': null, 'x-old': null, 'x-new': 'replaced', 'x-added': ['a:b', 'c'], 'x-list': '1' });
  });

  it('query string: the same operations; repeated arguments kept', async () => {
    const recorded = await run({ remove: { querystring: ['d'] }, rename: { querystring: ['o:n'] }, replace: { querystring: ['r:2'] }, add: { querystring: ['a:1', 'r:no'] }, append: { querystring: ['r:3'] } }, { query: 'd=1&o=x&o=y&r=1' });
    expect(recorded.query?.toString()).toBe('n=x&n=y&a=1&r=2&r=3');
  });

  it('JSON and form bodies; other content types and invalid JSON untouched; no body read without body operations', async () => {
    const config = { remove: { body: ['s'] }, rename: { body: ['o:n'] }, replace: { body: ['r:R'] }, add: { body: ['a:A'] }, append: { body: ['l:2'] } };
    const json = await run(config, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"s":1,"o":true,"r":"x","l":1}' });
    expect(JSON.parse(json.body!.toString())).toEqual({ n: true, r: 'R', l: ['2'], a: 'A' });
    const form = await run(config, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 's=1&o=v&r=x&l=1' });
    expect(form.body!.toString()).toBe('n=v&r=R&a=A&l=1&l=2');
    expect((await run(config, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 's=1' })).body).toBeNull();
    expect((await run(config, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' })).body).toBeNull();
    const emptyJson = await run({ add: { body: ['a:1'] } }, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(emptyJson.body!.toString()).toBe('{"a":"1"}');
  });

  it('http_method GET moves a form body into the query string, replacing arguments of the same name', async () => {
    const recorded = await run({ http_method: 'GET' }, { method: 'POST', query: 'a=1&keep=k', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=2&b=3&b=4' });
    expect([recorded.method, recorded.query?.toString()]).toEqual(['GET', 'keep=k&a=2&b=3&b=4']);
    const json = await run({ http_method: 'GET' }, { method: 'POST', query: 'a=1', headers: { 'content-type': 'application/json' }, body: '{"a":2}' });
    expect(json.query).toBeNull();
  });

  it('http_method and replace.uri', async () => {
    const recorded = await run({ http_method: 'PUT', replace: { uri: '/elsewhere' } }, {});
    expect([recorded.method, recorded.path]).toEqual(['PUT', '/elsewhere']);
  });
});
