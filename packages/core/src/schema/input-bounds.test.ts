import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { consumerSchema, keySchema } from '../entities';
import { boundViolations, LONG_TEXT_MAX, MAX_ARRAY_ITEMS, MAX_NESTING, MAX_STRING_LENGTH, structuralViolations } from './input-bounds';
import { checkWith } from './validate';

describe('structuralViolations (what no admin field may hold)', () => {
  it('passes ordinary bodies', () => {
    expect(structuralViolations({ name: 'svc', tags: ['a', 'b'], config: { key_names: ['apikey'], nested: { x: [1, 2] } } })).toBeNull();
  });

  it('names a NUL byte in a value, nested and inside arrays', () => {
    expect(structuralViolations({ username: 'a\u0000b' })).toEqual({ username: 'must not contain a NUL byte' });
    expect(structuralViolations({ config: { anonymous: '\u0000' } })).toEqual({ config: { anonymous: 'must not contain a NUL byte' } });
    expect(structuralViolations({ tags: ['ok', '\u0000'] })).toEqual({ tags: ['must not contain a NUL byte'] });
    expect(structuralViolations({ sources: [{ ip: '\u0000' }] })).toEqual({ sources: ['ip: must not contain a NUL byte'] });
  });

  it('names a NUL byte in a key', () => {
    expect(structuralViolations({ 'a\u0000b': 1 })).toEqual({ 'a\\0b': 'field name must not contain a NUL byte' });
  });

  it('refuses prototype-pollution keys at any depth, as own fields of the error', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const fields = structuralViolations(JSON.parse(`{"config":{"${key}":{"polluted":true}}}`));
      expect(fields).not.toBeNull();
      const config = (fields as Record<string, Record<string, unknown>>).config!;
      expect(Object.keys(config)).toEqual([key]);
      expect(config[key]).toBe('field name not allowed');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bounds arrays, long text and nesting', () => {
    expect(structuralViolations({ paths: new Array(MAX_ARRAY_ITEMS + 1).fill('/a') })).toEqual({ paths: `length must be at most ${MAX_ARRAY_ITEMS}` });
    expect(structuralViolations({ paths: new Array(MAX_ARRAY_ITEMS).fill('/a') })).toBeNull();
    expect(structuralViolations({ jwk: 'x'.repeat(LONG_TEXT_MAX + 1) })).toEqual({ jwk: `length must be at most ${LONG_TEXT_MAX}` });
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(structuralViolations({ config: deep })).toEqual({ config: [`nested too deeply (at most ${MAX_NESTING} levels)`] });
    expect(structuralViolations({ ['k'.repeat(MAX_STRING_LENGTH + 1)]: 1 })).toEqual({ [`${'k'.repeat(64)}…`]: `field name length must be at most ${MAX_STRING_LENGTH}` });
  });

  it('reports a few findings, not one per element', () => {
    const fields = structuralViolations({ tags: new Array(500).fill('\u0000') }) as { tags: string[] };
    expect(fields.tags.length).toBeLessThanOrEqual(8);
  });
});

describe('boundViolations (strings bounded by their field)', () => {
  it('bounds strings to 1,024 characters unless the field allows more', () => {
    expect(boundViolations(consumerSchema, { username: 'u'.repeat(MAX_STRING_LENGTH) })).toBeNull();
    expect(boundViolations(consumerSchema, { username: 'u'.repeat(MAX_STRING_LENGTH + 1) })).toEqual({ username: `length must be at most ${MAX_STRING_LENGTH}` });
    expect(boundViolations(consumerSchema, { tags: ['ok', 't'.repeat(2000)] })).toEqual({ tags: [`length must be at most ${MAX_STRING_LENGTH}`] });
    // PEM and JWK text: 64 KiB
    expect(boundViolations(keySchema, { kid: 'k', jwk: 'j'.repeat(60_000) })).toBeNull();
    expect(boundViolations(keySchema, { kid: 'k', pem: { private_key: 'p'.repeat(60_000) } })).toBeNull();
    expect(boundViolations(keySchema, { kid: 'k'.repeat(60_000) })).toEqual({ kid: `length must be at most ${MAX_STRING_LENGTH}` });
  });

  it('bounds strings in open records and unknown fields too', () => {
    const open = z.object({ config: z.record(z.string(), z.unknown()) });
    expect(boundViolations(open, { config: { anything: 'x'.repeat(5000) } })).toEqual({ config: { anything: `length must be at most ${MAX_STRING_LENGTH}` } });
  });

  it('checkWith refuses past a bound before validating', () => {
    const result = checkWith(consumerSchema, { username: 'u'.repeat(100_000) });
    expect(result).toEqual({ ok: false, fields: { username: 'length must be at most 65536' } });
    const long = checkWith(consumerSchema, { username: 'u'.repeat(2000) });
    expect(long).toEqual({ ok: false, fields: { username: `length must be at most ${MAX_STRING_LENGTH}` } });
  });
});
