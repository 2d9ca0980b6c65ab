import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { consumers, keySets, keys } from '@gatehouse/core';
import { adminOpenApiDocument, templateOf } from './admin-document';

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

const build = (routes: Parameters<typeof adminOpenApiDocument>[0]['routes']) =>
  adminOpenApiDocument({
    version: '1',
    routes,
    entities: [consumers, keySets, keys],
    plugins: [],
    catalogue: { '/things/:thing': { delete: { summary: 'Remove a thing', params: { thing: 'the thing' }, responses: { 204: { description: 'Gone' } } } } },
    tagDescriptions: {},
  }) as unknown as Doc;

describe('adminOpenApiDocument', () => {
  it('writes route paths as OpenAPI templates', () => {
    expect(templateOf('/rbac/roles/:role/endpoints/:workspace/*endpoint', {})).toBe('/rbac/roles/{role}/endpoints/{workspace}/{endpoint}');
    expect(templateOf('/consumers/:ref/', { ref: 'id_or_key' })).toBe('/consumers/{id_or_key}');
    expect(templateOf('/', {})).toBe('/');
  });

  it('gives a route registered without a doc an operation made from its path', () => {
    const doc = build([{ path: '/upstreams/:upstream/health', operations: [{ method: 'get' }] }]);
    const get = doc.paths['/upstreams/{upstream}/health']!.get;
    expect(get).toMatchObject({ operationId: 'get-upstreams-upstream-health', tags: ['upstreams'], summary: 'GET /upstreams/{upstream}/health' });
    expect(doc.paths['/upstreams/{upstream}/health']!.parameters).toEqual([
      { name: 'upstream', in: 'path', required: true, description: 'the upstream', schema: { type: 'string' } },
    ]);
    expect(get.responses[401]).toEqual({ $ref: '#/components/responses/Unauthorized' });
  });

  it('takes a custom doc from the catalogue when the route was added without one', () => {
    const doc = build([{ path: '/things/:thing', operations: [{ method: 'delete' }] }]);
    expect(doc.paths['/things/{thing}']!.delete).toMatchObject({ summary: 'Remove a thing', responses: { 204: { description: 'Gone' } } });
    expect(doc.paths['/things/{thing}']!.parameters[0].description).toBe('the thing');
  });

  it('names the parameters of nested entity routes after the parent and uses the entity components', () => {
    const doc = build([
      { path: '/key-sets/:parent/keys', operations: [{ method: 'post', doc: { entity: 'keys', shape: 'nested-collection', parent: 'key_sets' } }] },
      { path: '/keys/:ref/set', operations: [{ method: 'get', doc: { entity: 'keys', shape: 'reference', field: 'set', parent: 'key_sets' } }] },
    ]);
    const post = doc.paths['/key-sets/{key_set_id_or_key}/keys']!.post;
    expect(post.operationId).toBe('create-keys-of-key_set');
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/KeyInput' });
    expect(doc.paths['/keys/{id_or_key}/set']!.get.responses[200].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/KeySet' });
    expect(doc.components.schemas.KeyInput).toBeDefined();
  });

  it('keeps operation ids unique', () => {
    const doc = build([
      { path: '/a-b', operations: [{ method: 'get' }] },
      { path: '/a_b', operations: [{ method: 'get' }] },
    ]);
    expect([doc.paths['/a-b']!.get.operationId, doc.paths['/a_b']!.get.operationId]).toEqual(['get-a_b', 'get-a_b-2']);
  });

  it('gives the same bytes for the same input, without defaults generated per call', () => {
    const tokens = {
      name: 'tokens',
      adminPath: 'tokens',
      schema: z.object({ id: z.uuid().optional(), secret: z.string().default(() => randomUUID()), ttl: z.number().default(60) }),
    };
    const input = {
      version: '1',
      routes: [{ path: '/tokens', operations: [{ method: 'post' as const, doc: { entity: 'tokens', shape: 'collection' as const } }] }],
      entities: [tokens],
      plugins: [],
      catalogue: {},
      tagDescriptions: {},
    };
    const first = JSON.stringify(adminOpenApiDocument(input));
    expect(JSON.stringify(adminOpenApiDocument(input))).toBe(first);
    const schemas = (JSON.parse(first) as Doc).components.schemas;
    expect(schemas.TokenInput.properties.secret).toEqual({ type: 'string', description: 'generated when omitted' });
    expect(schemas.TokenInput.properties.ttl.default).toBe(60);
  });
});
