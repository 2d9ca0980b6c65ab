import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { pluginSchema } from '../entities/plugins';
import { routeSchema } from '../entities/routes';
import { serviceSchema } from '../entities/services';
import { consumerSchema } from '../entities/consumers';
import { coerceInput } from './coerce';
import { decodeFormPairs } from './form';
import { keyAuthConfigMirror } from './__fixtures__/key-auth-config';

const keyAuthPlugin = pluginSchema.extend({ config: keyAuthConfigMirror.prefault({}) });

describe('coerceInput', () => {
  it('turns "true"/"false" into booleans for boolean fields only', () => {
    expect(coerceInput(routeSchema, { strip_path: 'false', preserve_host: 'true', name: 'true' })).toEqual({
      strip_path: false,
      preserve_host: true,
      name: 'true',
    });
  });

  it('leaves other strings in boolean fields for validation to report', () => {
    expect(coerceInput(routeSchema, { strip_path: 'yes' })).toEqual({ strip_path: 'yes' });
  });

  it('turns numeric strings into numbers for number fields', () => {
    expect(coerceInput(serviceSchema, { port: '8080', retries: '3', read_timeout: '1e3', host: '10' })).toEqual({
      port: 8080,
      retries: 3,
      read_timeout: 1000,
      host: '10',
    });
  });

  it('leaves non-numeric strings in number fields alone', () => {
    expect(coerceInput(serviceSchema, { port: 'eighty', retries: ' ' })).toEqual({ port: 'eighty', retries: ' ' });
  });

  it('wraps a single value for an array field into a one-element array, without splitting commas', () => {
    expect(coerceInput(routeSchema, { paths: '/a', hosts: 'a.com,b.com' })).toEqual({ paths: ['/a'], hosts: ['a.com,b.com'] });
  });

  it('turns the empty string into null for any field', () => {
    expect(coerceInput(consumerSchema, { username: '', custom_id: 'c', tags: '' })).toEqual({ username: null, custom_id: 'c', tags: null });
  });

  it('can keep empty strings when asked', () => {
    expect(coerceInput(consumerSchema, { username: '' }, { emptyToNull: false })).toEqual({ username: '' });
  });

  it('recurses into nested records (plugin config)', () => {
    expect(coerceInput(keyAuthPlugin, { config: { hide_credentials: 'true', key_names: 'apikey', anonymous: '' } })).toEqual({
      config: { hide_credentials: true, key_names: ['apikey'], anonymous: null },
    });
  });

  it('recurses into maps and arrays of records', () => {
    expect(coerceInput(routeSchema, { headers: { 'x-v': '1' }, sources: [{ ip: '10.0.0.1', port: '80' }] })).toEqual({
      headers: { 'x-v': ['1'] },
      sources: [{ ip: '10.0.0.1', port: 80 }],
    });
  });

  it('coerces into unions of number literals', () => {
    expect(coerceInput(routeSchema, { https_redirect_status_code: '301' })).toEqual({ https_redirect_status_code: 301 });
    expect(coerceInput(routeSchema, { https_redirect_status_code: '999' })).toEqual({ https_redirect_status_code: '999' });
  });

  it('picks the union member that accepts the coerced value', () => {
    const schema = z.object({ v: z.union([z.boolean(), z.number()]) });
    expect(coerceInput(schema, { v: '12' })).toEqual({ v: 12 });
    expect(coerceInput(schema, { v: 'false' })).toEqual({ v: false });
    expect(coerceInput(schema, { v: 'x' })).toEqual({ v: 'x' });
  });

  it('leaves unknown keys and already-typed JSON values unchanged', () => {
    const json = { name: 'key-auth', enabled: false, protocols: ['http'], foo: '1', config: { key_names: ['k'] } };
    expect(coerceInput(keyAuthPlugin, json)).toEqual(json);
  });

  it('does not turn a map into an array', () => {
    expect(coerceInput(routeSchema, { paths: { x: '/a' } })).toEqual({ paths: { x: '/a' } });
  });

  it('leaves an open record (the generic plugin config) to the plugin\'s own schema', () => {
    expect(coerceInput(pluginSchema, { enabled: 'true', config: { hide_credentials: 'true', anonymous: '' } })).toEqual({
      enabled: true,
      config: { hide_credentials: 'true', anonymous: '' },
    });
  });

  it('leaves a non-object where a record is expected', () => {
    expect(coerceInput(keyAuthPlugin, { config: 'x' })).toEqual({ config: 'x' });
  });

  it('does the whole form path for a plugin', () => {
    const form = decodeFormPairs([
      ['name', 'key-auth'],
      ['config.key_names[1]', 'apikey'],
      ['config.key_names[2]', 'x-key'],
      ['config.hide_credentials', 'true'],
      ['config.anonymous', ''],
      ['protocols', 'https'],
      ['enabled', 'false'],
    ]);
    expect(coerceInput(keyAuthPlugin, form)).toEqual({
      name: 'key-auth',
      config: { key_names: ['apikey', 'x-key'], hide_credentials: true, anonymous: null },
      protocols: ['https'],
      enabled: false,
    });
  });
});
