import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { consumerSchema, consumers } from '../entities/consumers';
import { plugins } from '../entities/plugins';
import { routes } from '../entities/routes';
import { serviceSchema, services } from '../entities/services';
import { kongEntitySchemaOf, kongFieldOf, kongPluginSchemaOf, kongSchemaOf, type KongSchema } from './kong-schema';
import { keyAuthConfigMirror } from './__fixtures__/key-auth-config';

function field(schema: KongSchema, name: string) {
  const entry = schema.fields.find((f) => Object.keys(f)[0] === name);
  if (!entry) throw new Error(`no field ${name}`);
  return entry[name];
}

describe('kongSchemaOf (GET /schemas/{entity})', () => {
  it('lists fields as one-key objects in declaration order', () => {
    const schema = kongSchemaOf(consumerSchema);
    expect(schema.fields.map((f) => Object.keys(f))).toEqual([['id'], ['created_at'], ['updated_at'], ['username'], ['custom_id'], ['tags']]);
    expect(schema.fields.every((f) => Object.keys(f).length === 1)).toBe(true);
  });

  it('marks generated fields as Kong does', () => {
    const schema = kongSchemaOf(consumerSchema);
    expect(field(schema, 'id')).toEqual({ type: 'string', uuid: true, auto: true });
    expect(field(schema, 'created_at')).toEqual({ type: 'integer', timestamp: true, auto: true });
  });

  it('nullable fields are not required; tags is a set of strings', () => {
    const schema = kongEntitySchemaOf(consumers, { entityChecks: [{ at_least_one_of: ['custom_id', 'username'] }] });
    expect(field(schema, 'username')).toEqual({ type: 'string', required: false, len_min: 1, unique: true });
    expect(field(schema, 'tags')).toEqual({
      type: 'set',
      required: false,
      elements: { type: 'string', required: true, len_min: 1, len_max: 128 },
    });
    expect(schema.entity_checks).toEqual([{ at_least_one_of: ['custom_id', 'username'] }]);
  });

  it('services: defaults, one_of, between, starts_with, integers', () => {
    const schema = kongEntitySchemaOf(services);
    expect(field(schema, 'host')).toEqual({ type: 'string', required: true, len_min: 1 });
    expect(field(schema, 'protocol')).toEqual({
      type: 'string',
      required: true,
      default: 'http',
      one_of: ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'],
    });
    expect(field(schema, 'port')).toEqual({ type: 'integer', required: true, default: 80, between: [0, 65535] });
    expect(field(schema, 'connect_timeout')).toEqual({ type: 'integer', required: true, default: 60000, between: [1, 2147483646] });
    expect(field(schema, 'path')).toEqual({ type: 'string', required: false, starts_with: '/' });
    expect(field(schema, 'enabled')).toEqual({ type: 'boolean', required: true, default: true });
    expect(field(schema, 'ca_certificates')).toEqual({ type: 'array', required: false, elements: { type: 'string', required: true, uuid: true } });
  });

  it('routes: foreign reference, maps, records in arrays, integer one_of, protocols set', () => {
    const schema = kongEntitySchemaOf(routes);
    expect(field(schema, 'service')).toEqual({ type: 'foreign', required: false, reference: 'services', default: null, on_delete: 'restrict' });
    expect(field(schema, 'headers')).toEqual({
      type: 'map',
      required: false,
      keys: { type: 'string', required: true },
      values: { type: 'array', required: true, elements: { type: 'string', required: true } },
    });
    expect(field(schema, 'sources')).toMatchObject({
      type: 'array',
      elements: { type: 'record', fields: [{ ip: { type: 'string', required: false } }, { port: { type: 'integer', required: false } }] },
    });
    expect(field(schema, 'https_redirect_status_code')).toEqual({ type: 'integer', required: true, default: 426, one_of: [426, 301, 302, 307, 308] });
    expect(field(schema, 'protocols')).toMatchObject({ type: 'set', required: true, default: ['http', 'https'], len_min: 1 });
  });

  it('the plugins entity: foreign scopes with cascades and an open config record', () => {
    const schema = kongEntitySchemaOf(plugins);
    expect(field(schema, 'consumer')).toEqual({ type: 'foreign', required: false, reference: 'consumers', default: null, on_delete: 'cascade' });
    expect(field(schema, 'config')).toEqual({ type: 'record', required: true, abstract: true, fields: [] });
    expect(field(schema, 'name')).toEqual({ type: 'string', required: true, len_min: 1 });
  });

  it('takes foreign references from options', () => {
    const schema = kongSchemaOf(serviceSchema, { foreign: { client_certificate: 'certificates' } });
    expect(field(schema, 'client_certificate')).toMatchObject({ type: 'foreign', reference: 'certificates' });
  });

  it('applies .meta({kong}) overrides and descriptions', () => {
    const schema = kongSchemaOf(
      z.object({ names: z.array(z.string()).meta({ kong: { type: 'set' } }), secret: z.string().describe('a secret').meta({ kong: { encrypted: true } }) }),
    );
    expect(field(schema, 'names').type).toBe('set');
    expect(field(schema, 'secret')).toMatchObject({ type: 'string', description: 'a secret', encrypted: true });
  });

  it('describes numbers with exclusive and open bounds', () => {
    expect(kongFieldOf(z.number().int().positive())).toEqual({ type: 'integer', required: true, gt: 0 });
    expect(kongFieldOf(z.number().int().min(1))).toEqual({ type: 'integer', required: true, gt: 0 });
    expect(kongFieldOf(z.number().min(0.5).max(2))).toEqual({ type: 'number', required: true, between: [0.5, 2] });
    expect(kongFieldOf(z.number())).toEqual({ type: 'number', required: true });
  });

  it('an optional field without default is not required', () => {
    expect(kongFieldOf(z.string().optional())).toEqual({ type: 'string', required: false });
  });
});

describe('kongPluginSchemaOf (GET /schemas/plugins/{name})', () => {
  it('gives consumer, protocols and the config record', () => {
    const schema = kongPluginSchemaOf(keyAuthConfigMirror, { noConsumer: true });
    expect(schema.fields.map((f) => Object.keys(f)[0])).toEqual(['consumer', 'protocols', 'config']);
    expect(field(schema, 'consumer')).toEqual({ type: 'foreign', reference: 'consumers', eq: null });
    expect(field(schema, 'protocols')).toEqual({
      type: 'set',
      required: true,
      default: ['grpc', 'grpcs', 'http', 'https'],
      len_min: 1,
      elements: { type: 'string', required: true, one_of: ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'] },
    });
    const config = field(schema, 'config');
    expect(config.type).toBe('record');
    expect(config.required).toBe(true);
    expect(config.fields).toEqual([
      { key_names: { type: 'array', required: true, default: ['apikey'], len_min: 1, elements: { type: 'string', required: true } } },
      { hide_credentials: { type: 'boolean', required: true, default: false } },
      { anonymous: { type: 'string', required: false, len_min: 1 } },
      { key_in_header: { type: 'boolean', required: true, default: true } },
      { key_in_query: { type: 'boolean', required: true, default: true } },
      { key_in_body: { type: 'boolean', required: true, default: false } },
      { run_on_preflight: { type: 'boolean', required: true, default: true } },
      { realm: { type: 'string', required: false } },
    ]);
  });

  it('leaves consumer open when the plugin may be scoped to one, and can close route and service', () => {
    const open = kongPluginSchemaOf(keyAuthConfigMirror, { noConsumer: false });
    expect(field(open, 'consumer')).toEqual({ type: 'foreign', reference: 'consumers' });
    const closed = kongPluginSchemaOf(keyAuthConfigMirror, { noConsumer: true, noRoute: true, noService: true });
    expect(closed.fields.map((f) => Object.keys(f)[0])).toEqual(['consumer', 'route', 'service', 'protocols', 'config']);
    expect(field(closed, 'route')).toEqual({ type: 'foreign', reference: 'routes', eq: null });
  });

  it('is plain JSON', () => {
    const schema = kongPluginSchemaOf(keyAuthConfigMirror, { noConsumer: true });
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });
});
