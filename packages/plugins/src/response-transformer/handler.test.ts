import { describe, expect, it } from '@jest/globals';
import { fakeContext, fakeResponse } from '../../test/support/fake-context';
import { responseTransformerResponse, typedValue } from './handler';
import { responseTransformer } from './index';
import { responseTransformerConfigSchema } from './schema';

function run(config: Record<string, unknown>, headers: Record<string, string | string[]>, body = '') {
  const response = fakeResponse(200, headers, body);
  responseTransformerResponse(fakeContext().ctx, responseTransformerConfigSchema.parse(config), response);
  return { headers: response.headers, body: response.finish().toString() };
}

describe('response-transformer', () => {
  it("Kong's name, priority; a response hook only", () => {
    expect([responseTransformer.name, responseTransformer.priority, responseTransformer.access, typeof responseTransformer.response]).toEqual(['response-transformer', 800, undefined, 'function']);
    expect(responseTransformerConfigSchema.parse({}).add).toEqual({ json: [], json_types: [], headers: [] });
    expect(responseTransformerConfigSchema.safeParse({ add: { json_types: ['object'] } }).success).toBe(false);
  });

  it('headers: remove, rename, replace, add, append', () => {
    const { headers } = run(
      { remove: { headers: ['X-Gone'] }, rename: { headers: ['x-old:x-new'] }, replace: { headers: ['x-new:R', 'x-none:N'] }, add: { headers: ['x-new:no', 'x-add:A'] }, append: { headers: ['x-add:B'] } },
      { 'x-gone': '1', 'x-old': 'o', 'content-type': 'text/plain' },
    );
    expect(headers).toEqual({ 'x-new': 'R', 'x-add': ['A', 'B'], 'content-type': 'text/plain' });
  });

  it('JSON bodies: remove, rename, replace, add, append with json_types', () => {
    const { body } = run(
      {
        remove: { json: ['gone'] },
        rename: { json: ['old:new'] },
        replace: { json: ['r:5', 'none:x'], json_types: ['number'] },
        add: { json: ['flag:true', 'r:no'], json_types: ['boolean'] },
        append: { json: ['list:z'] },
      },
      { 'content-type': 'application/json' },
      '{"gone":1,"old":"o","r":"x","list":["y"]}',
    );
    expect(JSON.parse(body)).toEqual({ new: 'o', r: 5, list: ['y', 'z'], flag: true });
  });

  describe("append (Kong's body_transformer spec)", () => {
    const append = { append: { json: ['p1:v1', 'p3:"v1"', 'p4:-1', 'p5:false', 'p6:true'], json_types: ['string', 'string', 'number', 'boolean', 'boolean'] } };
    const appended = (json: string) => JSON.parse(run(append, { 'content-type': 'application/json' }, json).body);
    const rest = { p1: ['v1'], p3: ['"v1"'], p4: [-1], p5: [false], p6: [true] };

    it('new key:value if key does not exists', () => {
      expect(appended('{"p2":"v1"}')).toEqual({ p2: 'v1', ...rest });
    });
    it('value if key exists', () => {
      expect(appended('{"p1":"v2"}')).toEqual({ ...rest, p1: ['v2', 'v1'] });
    });
    it('value in double quotes', () => {
      expect(appended('{"p3":"v2"}')).toEqual({ ...rest, p3: ['v2', '"v1"'] });
    });
    it('number', () => {
      expect(appended('{"p4":"v2"}')).toEqual({ ...rest, p4: ['v2', -1] });
    });
    it('boolean', () => {
      expect(appended('{"p5":"v5", "p6":"v6"}')).toEqual({ ...rest, p5: ['v5', false], p6: ['v6', true] });
    });
    it('preserves empty arrays', () => {
      const body = run(append, { 'content-type': 'application/json' }, '{"p2":"v1", "a":[]}').body;
      expect(JSON.parse(body)).toEqual({ p2: 'v1', a: [], ...rest });
      expect(body).toContain('"a":[]');
    });
    it('replaces a member that is null, a number or a boolean, as Kong does', () => {
      expect(appended('{"p1":null,"p4":7,"p5":true}')).toEqual(rest);
    });
  });

  it('other content types, and JSON that is not an object, pass unchanged', () => {
    expect(run({ add: { json: ['a:1'] } }, { 'content-type': 'text/plain' }, '{"x":1}').body).toBe('{"x":1}');
    expect(run({ add: { json: ['a:1'] } }, { 'content-type': 'application/json' }, '[1]').body).toBe('[1]');
  });

  it('responses without a body are not held back: HEAD, 204, 304', () => {
    for (const [method, status] of [['HEAD', 200], ['GET', 204], ['GET', 304]] as const) {
      const response = fakeResponse(status, { 'content-type': 'application/json', 'content-length': '42' });
      let heldBack = false;
      response.transformBody = () => void (heldBack = true);
      responseTransformerResponse(fakeContext({ method }).ctx, responseTransformerConfigSchema.parse({ add: { json: ['a:1'] } }), response);
      expect([method, status, heldBack, response.headers['content-length']]).toEqual([method, status, false, '42']);
    }
  });

  it('typed values', () => {
    expect([typedValue('true', 'boolean'), typedValue('no', 'boolean'), typedValue('1.5', 'number'), typedValue('x', 'number'), typedValue('1', 'string'), typedValue('1', undefined)]).toEqual([true, false, 1.5, 'x', '1', '1']);
  });
});
