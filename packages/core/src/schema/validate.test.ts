import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { DbError, ErrorCode, schemaViolation } from '../errors';
import { consumerSchema, consumers } from '../entities/consumers';
import { pluginSchema } from '../entities/plugins';
import { routeSchema } from '../entities/routes';
import { serviceSchema } from '../entities/services';
import { coerceInput } from './coerce';
import { decodeFormPairs } from './form';
import { checkWith, mergeFieldErrors, validateWith } from './validate';
import { keyAuthConfigMirror } from './__fixtures__/key-auth-config';

const keyAuthPlugin = pluginSchema.extend({ config: keyAuthConfigMirror.prefault({}) });
const UUID = '4b5e6c1a-8d2e-4f3b-9a1c-2d3e4f5a6b7c';

function violation(schema: z.ZodType, input: unknown): DbError {
  try {
    validateWith(schema, input);
  } catch (err) {
    if (err instanceof DbError) return err;
    throw err;
  }
  throw new Error('expected a schema violation');
}

function fieldsOf(schema: z.ZodType, input: unknown) {
  const result = checkWith(schema, input);
  if (result.ok) throw new Error('expected field errors');
  return result.fields;
}

describe('validateWith: Kong examples (kong-reference 4.2)', () => {
  it('missing required field: POST /consumers/{id}/plugins {}', () => {
    const err = violation(pluginSchema, {});
    expect(err.status).toBe(400);
    expect(err.toBody()).toEqual({
      code: 2,
      name: 'schema violation',
      message: 'schema violation (name: required field missing)',
      fields: { name: 'required field missing' },
    });
  });

  it('unknown field', () => {
    const err = violation(consumerSchema, { username: 'bob', foo: 'x' });
    expect(err.message).toBe('schema violation (foo: unknown field)');
    expect(err.fields).toEqual({ foo: 'unknown field' });
  });

  it('entity check: POST /consumers {} (the caller adds @entity)', () => {
    const value = validateWith(consumerSchema, {});
    const err = schemaViolation(mergeFieldErrors(consumers.check?.(value)));
    expect(err.toBody()).toEqual({
      code: 2,
      name: 'schema violation',
      message: "schema violation (at least one of these fields must be non-empty: 'custom_id', 'username')",
      fields: { '@entity': ["at least one of these fields must be non-empty: 'custom_id', 'username'"] },
    });
  });

  it('several errors: "N schema violations (a; b)", fields sorted as Kong sorts them', () => {
    const err = violation(serviceSchema, { port: 'x', host: 'h', retries: -1 });
    expect(err.message).toBe('2 schema violations (port: expected an integer; retries: value should be between 0 and 32767)');
    expect(Object.keys(err.fields)).toEqual(['port', 'retries']);
  });

  it('entity errors come first when merged with field errors', () => {
    const result = checkWith(consumerSchema, { foo: 1 });
    expect(result.ok).toBe(false);
    const fields = mergeFieldErrors(result.ok ? null : result.fields, consumers.check?.({ username: null, custom_id: null }));
    expect(schemaViolation(fields).message).toBe(
      "2 schema violations (at least one of these fields must be non-empty: 'custom_id', 'username'; foo: unknown field)",
    );
  });

  it('nested config errors nest under fields.config', () => {
    const err = violation(keyAuthPlugin, { name: 'key-auth', config: { hide_credentials: 'yes', key_names: ['hello\\world'], nope: 1 } });
    expect(err.fields).toEqual({
      config: {
        hide_credentials: 'expected a boolean',
        key_names: ["bad header name 'hello\\world', allowed characters are A-Z, a-z, 0-9, '_', and '-'"],
        nope: 'unknown field',
      },
    });
    expect(err.code).toBe(ErrorCode.SCHEMA_VIOLATION);
    expect(err.message).toMatch(/^3 schema violations \(config\.hide_credentials: expected a boolean; config\.key_names: bad header name/);
  });
});

describe('validateWith: messages', () => {
  it('required field missing for a missing or null required field', () => {
    expect(fieldsOf(serviceSchema, {})).toEqual({ host: 'required field missing' });
    expect(fieldsOf(serviceSchema, { host: null })).toEqual({ host: 'required field missing' });
    expect(fieldsOf(serviceSchema, { host: 'h', port: null })).toEqual({ port: 'required field missing' });
  });

  it('null is fine on a nullable field', () => {
    expect(validateWith(serviceSchema, { host: 'h', name: null, path: null })).toMatchObject({ host: 'h', name: null, path: null, port: 80 });
  });

  it('type messages', () => {
    expect(fieldsOf(serviceSchema, { host: 1, port: 1.5, enabled: 'x', tags: 'x', protocol: 3 })).toEqual({
      host: 'expected a string',
      port: 'expected an integer',
      enabled: 'expected a boolean',
      tags: 'expected an array',
      protocol: 'expected a string',
    });
    expect(fieldsOf(z.object({ ratio: z.number() }), { ratio: 'half' })).toEqual({ ratio: 'expected a number' });
    expect(fieldsOf(keyAuthPlugin, { name: 'key-auth', config: 'x' })).toEqual({ config: 'expected a record' });
    expect(fieldsOf(pluginSchema, { name: 'p', config: [] })).toEqual({ config: 'expected a record' });
    expect(fieldsOf(routeSchema, { paths: ['/'], headers: 'x' })).toEqual({ headers: 'expected a map' });
  });

  it('unknown fields nested in a strict record and a foreign reference', () => {
    expect(fieldsOf(routeSchema, { paths: ['/'], service: { id: UUID, name: 'x' } })).toEqual({ service: { name: 'unknown field' } });
  });

  it('enum: expected one of', () => {
    expect(fieldsOf(z.object({ protocol: z.enum(['http', 'https']) }), { protocol: 'ftp' })).toEqual({ protocol: 'expected one of: http, https' });
    expect(fieldsOf(routeSchema, { paths: ['/'], https_redirect_status_code: 303 })).toEqual({
      https_redirect_status_code: 'expected one of: 426, 301, 302, 307, 308',
    });
    expect(fieldsOf(routeSchema, { paths: ['/'], https_redirect_status_code: 'moved' })).toEqual({
      https_redirect_status_code: 'expected an integer',
    });
  });

  it('a single literal: value must be', () => {
    expect(fieldsOf(z.object({ v: z.literal('x') }), { v: 'y' })).toEqual({ v: 'value must be x' });
  });

  it('lengths', () => {
    expect(fieldsOf(consumerSchema, { username: '' })).toEqual({ username: 'length must be at least 1' });
    expect(fieldsOf(consumerSchema, { username: 'u', tags: ['x'.repeat(129)] })).toEqual({ tags: ['length must be at most 128'] });
    expect(fieldsOf(keyAuthPlugin, { name: 'key-auth', config: { key_names: [] } })).toEqual({ config: { key_names: 'length must be at least 1' } });
  });

  it('number ranges', () => {
    expect(fieldsOf(serviceSchema, { host: 'h', port: 70000 })).toEqual({ port: 'value should be between 0 and 65535' });
    expect(fieldsOf(serviceSchema, { host: 'h', connect_timeout: 0 })).toEqual({ connect_timeout: 'value should be between 1 and 2147483646' });
    expect(fieldsOf(z.object({ n: z.number().min(3) }), { n: 1 })).toEqual({ n: 'value must be at least 3' });
    expect(fieldsOf(z.object({ n: z.number().positive() }), { n: 0 })).toEqual({ n: 'value must be greater than 0' });
    expect(fieldsOf(z.object({ n: z.number().max(9) }), { n: 10 })).toEqual({ n: 'value must be at most 9' });
  });

  it('uuid', () => {
    expect(fieldsOf(consumerSchema, { username: 'u', id: 'nope' })).toEqual({ id: 'expected a valid UUID' });
    expect(fieldsOf(routeSchema, { paths: ['/'], service: { id: 'nope' } })).toEqual({ service: { id: 'expected a valid UUID' } });
    expect(fieldsOf(serviceSchema, { host: 'h', ca_certificates: [UUID, 'nope'] })).toEqual({ ca_certificates: ['expected a valid UUID'] });
  });

  it("custom refine and regex messages pass through as written in the schema", () => {
    expect(fieldsOf(routeSchema, { paths: ['/ok', 'bad'] })).toEqual({ paths: ['should start with: / (fixed path) or ~/ (regex path)'] });
    expect(fieldsOf(routeSchema, { methods: ['get'] })).toEqual({ methods: ['invalid value: must be uppercase'] });
    expect(fieldsOf(serviceSchema, { host: 'h', path: 'x' })).toEqual({ path: 'should start with: /' });
    expect(fieldsOf(serviceSchema, { host: 'h', name: 'a b' })).toEqual({
      name: "invalid value: must contain only alphanumeric and '., -, _, ~' characters",
    });
  });

  it('a regex without a message gives Kong\'s "invalid value: <value>"', () => {
    expect(fieldsOf(z.object({ v: z.string().regex(/^a+$/) }), { v: 'b' })).toEqual({ v: 'invalid value: b' });
  });

  it('array element errors list the bad elements in order', () => {
    expect(fieldsOf(keyAuthPlugin, { name: 'key-auth', config: { key_names: ['a b', 'ok', 'c@d'] } })).toEqual({
      config: {
        key_names: [
          "bad header name 'a b', allowed characters are A-Z, a-z, 0-9, '_', and '-'",
          "bad header name 'c@d', allowed characters are A-Z, a-z, 0-9, '_', and '-'",
        ],
      },
    });
  });

  it('record elements of an array contribute "field: message" strings', () => {
    expect(fieldsOf(routeSchema, { paths: ['/'], sources: [{ ip: '1.1.1.1' }, { ip: 1, nope: 1 }] })).toEqual({
      sources: ['ip: expected a string'],
    });
  });

  it('a map holds one message', () => {
    expect(fieldsOf(routeSchema, { headers: { a: 'x', b: [1] } })).toEqual({ headers: 'expected an array' });
  });

  it('a non-object input is reported under @entity', () => {
    expect(fieldsOf(consumerSchema, 'x')).toEqual({ '@entity': ['expected a record'] });
  });

  it('a field named __proto__ is refused by name, not swallowed (decision 16)', () => {
    const fields = fieldsOf(consumerSchema, JSON.parse('{"username":"u","__proto__":{"x":1}}'));
    expect(Object.keys(fields)).toEqual(['__proto__']);
    expect(schemaViolation(fields).message).toBe('schema violation (__proto__: field name not allowed)');
  });

  it('returns the parsed value with defaults filled', () => {
    expect(validateWith(keyAuthPlugin, { name: 'key-auth' })).toMatchObject({
      name: 'key-auth',
      route: null,
      protocols: ['grpc', 'grpcs', 'http', 'https'],
      enabled: true,
      config: { key_names: ['apikey'], hide_credentials: false, anonymous: null, realm: null },
    });
  });

  it('validates a decoded and coerced form body', () => {
    const schema = keyAuthPlugin;
    const body = coerceInput(schema, decodeFormPairs([['name', 'key-auth'], ['config.key_names', 'apikey'], ['config.anonymous', ''], ['enabled', 'nope']]));
    expect(fieldsOf(schema, body)).toEqual({ enabled: 'expected a boolean' });
  });
});

describe('mergeFieldErrors', () => {
  it('joins @entity lists, merges records, keeps the first message and sorts keys with @entity first', () => {
    const merged = mergeFieldErrors(
      { b: 'first', config: { x: 'x1' }, '@entity': ['e1'] },
      null,
      { a: 'a1', b: 'second', config: { w: 'w1' }, '@entity': ['e2'] },
      undefined,
    );
    expect(merged).toEqual({ '@entity': ['e1', 'e2'], a: 'a1', b: 'first', config: { w: 'w1', x: 'x1' } });
    expect(Object.keys(merged)).toEqual(['@entity', 'a', 'b', 'config']);
    expect(Object.keys(merged.config as object)).toEqual(['w', 'x']);
  });

  it('returns an empty object for nothing', () => {
    expect(mergeFieldErrors()).toEqual({});
  });
});
