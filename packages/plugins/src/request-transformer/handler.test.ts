import { describe, expect, it } from '@jest/globals';
import { fakeContext, type FakeRequest } from '../shared/fake-context';
import { requestTransformerAccess } from './handler';
import { requestTransformer } from './index';
import { requestTransformerConfigSchema } from './schema';

async function run(config: Record<string, unknown>, request: FakeRequest) {
  const { ctx, recorded } = fakeContext(request);
  await requestTransformerAccess(ctx, requestTransformerConfigSchema.parse(config));
  return recorded;
}

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
