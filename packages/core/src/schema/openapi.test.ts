import { describe, expect, it } from '@jest/globals';
import { consumers } from '../entities/consumers';
import { plugins } from '../entities/plugins';
import { routes } from '../entities/routes';
import { services } from '../entities/services';
import { openApiDocument } from './openapi';
import { keyAuthConfigMirror } from './__fixtures__/key-auth-config';

const doc = openApiDocument({
  entities: [consumers, services, routes, plugins],
  plugins: [{ name: 'key-auth', configSchema: keyAuthConfigMirror }],
  version: '1.2.3',
});
const schemas = doc.components.schemas as Record<string, any>;
const paths = doc.paths as Record<string, any>;

describe('openApiDocument', () => {
  it('is an OpenAPI 3.1 document with the given version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.3');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('has response, input and patch components per entity', () => {
    for (const name of ['Consumer', 'Service', 'Route', 'Plugin']) {
      expect(schemas[name]).toBeDefined();
      expect(schemas[`${name}Input`]).toBeDefined();
      expect(schemas[`${name}Patch`]).toBeDefined();
    }
    expect(schemas.Consumer.$schema).toBeUndefined();
  });

  it('input schemas leave fields with defaults optional; response schemas require them', () => {
    expect(schemas.ServiceInput.required).toEqual(['host']);
    expect(schemas.ServiceInput.properties.port.default).toBe(80);
    expect(schemas.Service.required).toEqual(expect.arrayContaining(['host', 'port', 'protocol', 'name']));
    expect(schemas.ServiceInput.additionalProperties).toBe(false);
  });

  it('patch schemas require nothing and carry no defaults', () => {
    expect(schemas.ServicePatch.required).toBeUndefined();
    expect(schemas.ServicePatch.properties.port.default).toBeUndefined();
    expect(schemas.ServicePatch.properties.port.type).toBe('integer');
  });

  it('has plugin config components', () => {
    expect(schemas.KeyAuthConfigInput.properties.key_names).toMatchObject({ type: 'array', default: ['apikey'], minItems: 1 });
    expect(schemas.KeyAuthConfigInput.required).toBeUndefined();
    expect(schemas.KeyAuthConfig.required).toEqual(expect.arrayContaining(['key_names', 'hide_credentials', 'anonymous']));
  });

  it('has collection and entity paths', () => {
    expect(Object.keys(paths)).toEqual([
      '/consumers',
      '/consumers/{id_or_key}',
      '/services',
      '/services/{id_or_key}',
      '/routes',
      '/routes/{id_or_key}',
      '/plugins',
      '/plugins/{id_or_key}',
    ]);
    expect(Object.keys(paths['/consumers'])).toEqual(['get', 'post']);
    expect(Object.keys(paths['/consumers/{id_or_key}'])).toEqual(['parameters', 'get', 'put', 'patch', 'delete']);
  });

  it('references the components from operations and accepts the three body encodings', () => {
    const post = paths['/services'].post;
    expect(Object.keys(post.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ServiceInput' });
    expect(post.responses[201].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Service' });
    expect(post.responses[400].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/KongError' });
    expect(paths['/services/{id_or_key}'].patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ServicePatch' });
    expect(paths['/services'].get.responses[200].content['application/json'].schema.properties.data.items).toEqual({
      $ref: '#/components/schemas/Service',
    });
  });

  it('every $ref resolves and every operationId is unique', () => {
    const refs: string[] = [];
    const ids: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref') refs.push(String(value));
          else if (key === 'operationId') ids.push(String(value));
          else walk(value);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(schemas[ref.replace('#/components/schemas/', '')]).toBeDefined();
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names the path parameter {id} for an entity without an endpoint key', () => {
    const bare = openApiDocument({ entities: [{ ...consumers, endpointKey: undefined }], plugins: [], version: '0' });
    expect(Object.keys(bare.paths)).toEqual(['/consumers', '/consumers/{id}']);
  });
});
