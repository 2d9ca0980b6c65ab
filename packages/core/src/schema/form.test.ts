import { describe, expect, it } from '@jest/globals';
import { decodeFormPairs } from './form';

describe('decodeFormPairs (Kong form decoding)', () => {
  it('keeps plain fields as strings', () => {
    expect(decodeFormPairs([['name', 'svc'], ['retries', '5'], ['enabled', 'false']])).toEqual({ name: 'svc', retries: '5', enabled: 'false' });
  });

  it('nests dotted keys', () => {
    expect(decodeFormPairs([['config.anonymous', 'x'], ['route.id', 'abc'], ['config.hide_credentials', 'true']])).toEqual({
      config: { anonymous: 'x', hide_credentials: 'true' },
      route: { id: 'abc' },
    });
  });

  it('builds arrays from repeated keys', () => {
    expect(decodeFormPairs([['paths', '/a'], ['paths', '/b']])).toEqual({ paths: ['/a', '/b'] });
  });

  it('builds arrays from paths[]', () => {
    expect(decodeFormPairs([['paths[]', '/a'], ['paths[]', '/b']])).toEqual({ paths: ['/a', '/b'] });
  });

  it('orders paths[1]/paths[2] by index, not arrival', () => {
    expect(decodeFormPairs([['paths[2]', '/b'], ['paths[1]', '/a'], ['paths[3]', '/c']])).toEqual({ paths: ['/a', '/b', '/c'] });
  });

  it('accepts indexed arrays below a dotted key', () => {
    expect(decodeFormPairs([['config.key_names[1]', 'apikey'], ['config.key_names[2]', 'x-key']])).toEqual({
      config: { key_names: ['apikey', 'x-key'] },
    });
  });

  it('keeps a single value single (the schema decides about arrays), and does not split commas', () => {
    expect(decodeFormPairs([['hosts', 'a.com,b.com']])).toEqual({ hosts: 'a.com,b.com' });
  });

  it('builds maps from name[key]=v, with dots inside brackets kept', () => {
    expect(decodeFormPairs([['headers[x-version]', '1'], ['headers[x.dotted]', '2']])).toEqual({ headers: { 'x-version': '1', 'x.dotted': '2' } });
  });

  it('repeated map keys give arrays', () => {
    expect(decodeFormPairs([['headers[x-v]', '1'], ['headers[x-v]', '2']])).toEqual({ headers: { 'x-v': ['1', '2'] } });
  });

  it('fills records inside arrays by index', () => {
    expect(decodeFormPairs([['sources[2].ip', '10.0.0.2'], ['sources[1].ip', '10.0.0.1'], ['sources[1].port', '80']])).toEqual({
      sources: [{ ip: '10.0.0.1', port: '80' }, { ip: '10.0.0.2' }],
    });
  });

  it('keeps empty strings (coercion turns them into null)', () => {
    expect(decodeFormPairs([['config.anonymous', '']])).toEqual({ config: { anonymous: '' } });
  });

  it('unescapes %5B/%5D brackets', () => {
    expect(decodeFormPairs([['paths%5B1%5D', '/a']])).toEqual({ paths: ['/a'] });
  });

  it('takes keys with a leading or trailing dot, or an unclosed bracket, literally', () => {
    expect(decodeFormPairs([['.a', '1'], ['b.', '2'], ['c[1', '3']])).toEqual({ '.a': '1', 'b.': '2', 'c[1': '3' });
  });

  it('keeps the first shape when keys disagree', () => {
    expect(decodeFormPairs([['a.b', '1'], ['a', '2']])).toEqual({ a: { b: '1' } });
  });

  it('treats __proto__ as an ordinary field', () => {
    const out = decodeFormPairs([['__proto__.polluted', 'yes']]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes absurdly deep keys literally', () => {
    const key = `a${'[1]'.repeat(5000)}`;
    expect(decodeFormPairs([[key, 'x']])).toEqual({ [key]: 'x' });
  });

  it('refuses array indexes outside 1…1000, naming the field', () => {
    for (const key of ['paths[-1]', 'paths[0]', 'paths[1001]', 'config.key_names[99999999999999999999]']) {
      expect(() => decodeFormPairs([[key, '/x']])).toThrow(expect.objectContaining({ status: 400 }));
    }
    expect(() => decodeFormPairs([['config.key_names[0]', 'x']])).toThrow(
      expect.objectContaining({ fields: { config: { key_names: 'invalid array index 0: expected 1 to 1000' } } }),
    );
  });

  it('refuses arrays that mix indexed and unindexed elements, or repeat an index', () => {
    expect(() => decodeFormPairs([['tags[1]', 'a'], ['tags', 'b']])).toThrow(expect.objectContaining({ status: 400, fields: { tags: 'invalid array: mixes indexed and unindexed elements' } }));
    expect(() => decodeFormPairs([['tags[1]', 'a'], ['tags[]', 'b']])).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => decodeFormPairs([['paths[1]', '/a'], ['paths[1]', '/b']])).toThrow(expect.objectContaining({ fields: { paths: 'invalid array: gives an index twice' } }));
  });

  it('returns an empty object for no pairs', () => {
    expect(decodeFormPairs([])).toEqual({});
  });
});
