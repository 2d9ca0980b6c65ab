import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { mergeBySchema } from './merge';

const schema = z.object({
  name: z.string(),
  config: z
    .object({ a: z.number(), nested: z.object({ x: z.number(), y: z.number() }).nullable() })
    .nullable(),
  headers: z.record(z.string(), z.array(z.string())).nullable(),
  list: z.array(z.number()),
  service: z.object({ id: z.string() }).nullable(),
});

describe('PATCH merge', () => {
  it('merges records field by field and replaces maps, arrays and references', () => {
    const base = { name: 'n', config: { a: 1, nested: { x: 1, y: 2 } }, headers: { h1: ['v'] }, list: [1, 2], service: { id: 's1' } };
    const merged = mergeBySchema(schema, base, {
      config: { nested: { y: 3 } },
      headers: { h2: ['w'] },
      list: [9],
      service: null,
    });
    expect(merged).toEqual({ name: 'n', config: { a: 1, nested: { x: 1, y: 3 } }, headers: { h2: ['w'] }, list: [9], service: null });
    expect(base.config.nested.y).toBe(2);
  });

  it('replaces a record with null and fills a null record', () => {
    const base = { config: { a: 1, nested: null } };
    expect(mergeBySchema(schema, base, { config: { nested: { x: 5 } } })).toEqual({ config: { a: 1, nested: { x: 5 } } });
    expect(mergeBySchema(schema, base, { config: null })).toEqual({ config: null });
  });
});
