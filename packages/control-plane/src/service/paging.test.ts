import { describe, expect, it } from '@jest/globals';
import { DbError } from '@gatehouse/core';
import { decodeOffset, encodeOffset, nextLink, parseListQuery } from './paging';

function codeOf(run: () => unknown): number | undefined {
  try {
    run();
  } catch (err) {
    return (err as DbError).code;
  }
  return undefined;
}

describe('list query parsing', () => {
  it('defaults to 100 and accepts 1..1000', () => {
    expect(parseListQuery({}).size).toBe(100);
    expect(parseListQuery({ size: '1' }).size).toBe(1);
    expect(parseListQuery({ size: '1000' }).size).toBe(1000);
    for (const size of ['0', '1001', '-1', '2.5', 'ten', '']) expect(codeOf(() => parseListQuery({ size }))).toBe(9);
  });

  it('round-trips offsets and refuses malformed ones as invalid offsets', () => {
    const offset = encodeOffset(['a', 'b']);
    expect(decodeOffset(offset, 2)).toEqual(['a', 'b']);
    expect(parseListQuery({ offset: encodeOffset(['x']) }).after).toEqual(['x']);
    for (const bad of ['%%%', encodeOffset(['a', 'b']), Buffer.from('{}').toString('base64'), Buffer.from('[1]').toString('base64')]) {
      expect(codeOf(() => decodeOffset(bad))).toBe(7);
    }
  });

  it('reads tags: comma = all, slash = any, mixing or empty refused', () => {
    expect(parseListQuery({ tags: 'a,b' })).toMatchObject({ tagsAll: ['a', 'b'] });
    expect(parseListQuery({ tags: 'a/b' })).toMatchObject({ tagsAny: ['a', 'b'] });
    expect(parseListQuery({ tags: 'a' })).toMatchObject({ tagsAll: ['a'] });
    expect(parseListQuery({ tags: ['a', 'b'] })).toMatchObject({ tagsAll: ['a', 'b'] });
    for (const tags of ['a,b/c', '', 'a,,b', 'a/']) expect(codeOf(() => parseListQuery({ tags }))).toBe(11);
  });

  it('builds next links carrying size and tags only when given', () => {
    expect(nextLink('/consumers', null, parseListQuery({}))).toBeNull();
    expect(nextLink('/consumers', 'o+/=', parseListQuery({}))).toBe('/consumers?offset=o%2B%2F%3D');
    expect(nextLink('/consumers', 'o', parseListQuery({ size: '5', tags: 'a/b' }))).toBe('/consumers?offset=o&size=5&tags=a%2Fb');
  });
});
